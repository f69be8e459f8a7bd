"""``bench/egsm_peer.py --self-check``: CPU-only checks of the EGSM conversions, its reader
model and the output parser (see :func:`self_check`); no GPU needed, no EGSM build needed.
"""
from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from _egsm_io import (MAX_VCOUNT, convert_file, egsm_reader, egsm_text, normalise,
                      parse_egsm_output, query_support, read_tve, same_graph, same_query)
from _sibling import load

#: an EGSM run's output, line by line from its format strings (main.cpp, execution.cu,
#: hashed_trie_manager.cu:553-562, plan.cu:697-748, cuda_helpers.h, join_bfs_dfs.cu:947)
SAMPLE_OK = """\
Build Cuckoo Tries, time (ms): 12(host), 11(kernel)
Filtering, time (ms): 30(host), 29(kernel)

# Candidate edges: 
(0, 1): 120 0: 40 1: 38

Group 0: 3 
Group 0 pre edges: 
Group 0 cur edges: 
Group 1: 0 1 2 
Group 1 pre edges: 0 - 3 
Group 1 cur edges: 0 - 1 
Group 2: 4 (tree)
Group 2 pre edges: 1 - 4 
Group 2 cur edges: 

Before Allocation, Free 78.5GB, Total: 79.1GB
After allocation, Free 72.9GB, Total: 79.1GB

Finish group 0, time (ms): 0(host), 0(kernel)
Group 0 # partial results: 40
Finish group 1, time (ms): 3(host), 2(kernel)
Group 1 # partial results: 9000
Stop group 2, time (ms): 5(host), 5(kernel)
Combine remaining groups.
Skip load balancing due to out of memory at /x/join_bfs_dfs.cu (622)
Finish last group, time (ms): 40(host), 40(kernel)

Total join time (ms): 48(host) 47(kernel)
Triggered Load Balancing: true
# Matches: 123456789012
End.
"""


def self_check(binary: Path | None) -> int:
    """CPU-only checks: conversions, EGSM's reader model, the shipped files, the parser.

    A tiny graph in the shipped format (unsorted, reversed and repeated edges) is converted
    and read back by :func:`_egsm_io.egsm_reader`; bad inputs are refused; the same count
    (reference engine) comes from the original and converted files. On the shipped data
    (when present): every graph converts, reads back as warpmatch's graph, the raw file is
    shown unreadable by EGSM, and per set how many queries EGSM can take. The parser is run
    on output built from EGSM's format strings (``SAMPLE_OK``) and on failures; the runner
    on two stand-in scripts (one printing ``SAMPLE_OK``, one killed at its limit); the count
    check on made-up rows. A built binary (``binary``) is run on the tiny graph: its count is
    checked with a GPU, its CUDA error parsed without one.

    Returns
    -------
    int
        0 if every check passed, else 1.
    """
    import warpmatch as wm
    peer = load("egsm_peer")        # its data folder, query sets, runner and count check
    DATA, list_sets, set_size, run_egsm = peer.DATA, peer.list_sets, peer.set_size, peer.run_egsm
    fails: list[str] = []
    passed = 0

    def check(ok: bool, what: str) -> None:
        nonlocal passed
        passed += ok
        if not ok:
            fails.append(what)
            print(f"FAIL: {what}")

    tiny = ("t 0 6\nv 0 1\nv 2 1\nv 1 2\nv 3 2\nv 4 1\nv 5 3\ne 2 0 0\ne 0 1 0\ne 1 2 0\n"
            "e 3 1 0\ne 2 3 0\ne 4 2 0\ne 4 3 0\ne 0 2 0\ne 5 4 0\n")
    qtext = "t 0 3\nv 0 1\nv 1 2\nv 2 1\ne 0 1 0\ne 1 2 0\ne 0 2 0\n"
    with tempfile.TemporaryDirectory(prefix="wm_egsm_check_") as tmp:
        t = Path(tmp)
        (t / "tiny.graph").write_text(tiny)
        (t / "q.graph").write_text(qtext)
        g = read_tve(tiny, "tiny")
        pairs, notes = normalise(g, "tiny")
        check(len(pairs) == 8 and notes and "1 repeated" in notes[0], f"dedup {notes}")
        txt = egsm_text(g["labels"], pairs)
        check(txt.splitlines()[0] == "t 6 8" and "v 2 1 4" in txt and "e 0 2" in txt,
              "EGSM text: header, degree, u < v")
        r = egsm_reader(txt)
        check(not r["problems"], f"reader problems {r['problems']}")
        rows = [r["neighbors"][r["offsets"][v]:r["offsets"][v + 1]].tolist() for v in range(6)]
        check(rows == [[1, 2], [0, 2, 3], [0, 1, 3, 4], [1, 2, 4], [2, 3, 5], [4]],
              f"EGSM's CSR {rows}")
        check(bool(egsm_reader(tiny)["problems"]), "the raw shipped format is refused")
        late = "t 3 2\nv 0 1 1\ne 0 1\nv 1 1 2\nv 2 1 1\ne 1 2\n"
        check(any("before vertex" in p for p in egsm_reader(late)["problems"]), "e before v")
        for bad, what in (("t 0 2\nv 0 1\nv 1 1\ne 0 0 0\n", "self-loop"),
                          ("t 0 2\nv 0 1\nv 1 1\ne 0 1 3\n", "edge label"),
                          ("t 0 2\nv 0 1 2\nv 1 1 1\ne 0 1\n", "degree"),
                          ("t 0 2\nv 0 1\nv 2 1\ne 0 1 0\n", "ids")):
            try:
                normalise(read_tve(bad, what), what)
                check(False, f"{what} accepted")
            except ValueError:
                check(True, what)
        check(query_support(16, 32) is None and query_support(16, 33) is not None
              and query_support(17, 20) is not None, "query limits")
        ci = convert_file(t / "tiny.graph", t / "egsm" / "tiny.graph")
        cq = convert_file(t / "q.graph", t / "egsm" / "q.graph")
        ref = wm.count(wm.api.as_graph(t / "tiny.graph"),
                       wm.api.as_query(t / "q.graph", wm.api.as_graph(t / "tiny.graph")),
                       backend="reference")
        g2 = wm.api.as_graph(ci["file"])
        check(wm.count(g2, wm.api.as_query(cq["file"], g2), backend="reference") == ref
              and ref == 4, f"same count from converted files ({ref})")
        check(not same_graph(wm.api.as_graph(t / "tiny.graph"), Path(ci["file"])),
              "same_graph")
        check(same_query(wm.api.as_query(t / "q.graph"), Path(cq["file"])), "same_query")
        # the shipped data
        for gname in ("yeast", "hprd", "human"):
            src = DATA / "labeled" / gname / f"{gname}.graph"
            if not src.is_file():
                print(f"{gname}: {src} not found, shipped-data checks skipped")
                continue
            conv = convert_file(src, t / "egsm" / f"{gname}.graph")
            gw = wm.api.as_graph(src)
            check(not same_graph(gw, Path(conv["file"])), f"{gname}: EGSM's graph = warpmatch's")
            check(bool(egsm_reader(src.read_text())["problems"]), f"{gname}: raw file refused")
            msg = []
            for s, files in list_sets(gname).items():
                if set_size(s) > MAX_VCOUNT:
                    continue
                fit = 0
                for i, p in enumerate(files):
                    c = convert_file(p, t / "egsm" / gname / p.name)
                    fit += c["unsupported"] is None
                    if i < 3:
                        check(same_query(wm.api.as_query(p, gw), Path(c["file"])),
                              f"{gname} {p.name}: same query")
                msg.append(f"{s} {fit}/{len(files)}")
            print(f"{gname}: {conv['n']:,} vertices, {conv['m']:,} edges; queries EGSM "
                  f"takes: {', '.join(msg)}")
        # the parser
        p = parse_egsm_output(SAMPLE_OK)
        check(p["matches"] == 123456789012 and p["end"], "parse count")
        check(p["tries_ms"] == (12, 11) and p["filter_ms"] == (30, 29)
              and p["join_ms"] == (48, 47), "parse phases")
        check(abs(p["seconds"] - 0.087) < 1e-9 and abs(p["host_seconds"] - 0.090) < 1e-9,
              f"parse total {p['seconds']}")
        check(len(p["groups"]) == 4 and p["partial_results"] == [(0, 40), (1, 9000)]
              and p["plan_groups"] == 3 and p["combined"] and p["lb_triggered"]
              and p["lb_skipped"] == 1 and not p["kernel_errors"]
              and p["mem_free_gb"]["After allocation"] == 72.9, "parse the rest")
        bad = parse_egsm_output("GPUassert: out of memory /x/mem_pool.cu 24\n")
        check(bad["gpu_assert"] == "out of memory /x/mem_pool.cu 24"
              and bad["matches"] is None and bad["seconds"] is None, "parse GPUassert")
        k = parse_egsm_output(SAMPLE_OK.replace(
            "Combine", "/x/join_bfs_dfs.cu (723): launch failed\nCombine"))
        check(k["kernel_errors"] == ["/x/join_bfs_dfs.cu (723): launch failed"],
              "parse a device-side error")
        check(parse_egsm_output("The query graph should have at most 16 vertices and 32 "
                                "edges.\n")["too_large"], "parse the size refusal")
        # the runner and the count check, with stand-ins for EGSM
        fake, slow = t / "fake_egsm", t / "slow_egsm"
        fake.write_text("#!/bin/sh\ncat <<'EOF'\n" + SAMPLE_OK + "EOF\n")
        slow.write_text("#!/bin/sh\nexec sleep 30\n")
        fake.chmod(0o755)
        slow.chmod(0o755)
        r = run_egsm(fake, t / "d", t / "q", 30.0, t / "fake.log", [])
        check(r["status"] == "ok" and r["matches"] == 123456789012, f"runner: {r['status']}")
        r = run_egsm(slow, t / "d", t / "q", 0.5, t / "slow.log", [])
        check(r["status"] == "timeout" and r["wall_s"] < 10, f"runner kill: {r['status']}")
        for e, w, want in ((5, ("ok", 5), False), (5, ("ok", 6), True),
                           (5, ("timeout", 7), True), (5, ("timeout", 3), False)):
            row = {"graph": "x", "query": "q", "egsm": {"status": "ok", "matches": e},
                   "gpu": {"status": w[0], "count": w[1]}}
            with contextlib.redirect_stderr(io.StringIO()):     # its MISMATCH line
                peer.compare(row)
            check(row["mismatch"] is want, f"compare EGSM {e} vs wm {w}")
        # the binary, where built
        if binary is not None and binary.is_file():
            r = run_egsm(binary, Path(ci["file"]), Path(cq["file"]), 60.0, t / "run.log", [])
            if peer.GM._gpu_visible():
                check(r["status"] == "ok" and r["matches"] == ref,
                      f"EGSM on tiny: {r['status']} {r['matches']} vs {ref} ({r['detail']})")
            else:
                check(r["status"] == "crash" and r["gpu_assert"] is not None,
                      f"EGSM without a GPU: {r['status']} {r['detail']}")
                print(f"EGSM binary {binary} runs; without a GPU it stops at: "
                      f"{r['gpu_assert']}")
        else:
            print(f"no EGSM binary at {binary}: not run")
    print(f"self-check: {passed} checks passed, {len(fails)} failed")
    return 1 if fails else 0


