"""The count checks, the table and the JSON of ``bench/csm_peers.py``.

Part of ``csm_peers.py``'s benchmark, kept apart for length. Map: :func:`compare` (one
workload's per-update counts, warpmatch's engines against each other and RapidFlow: the
check column) < :func:`make_row` (the table's cells and the ratios behind them) <
:func:`print_table` (the markdown table and the geometric means) < :func:`strip_arrays`,
:func:`write_json` (the raw results, ``--json``).
"""
from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from _csm_child import ENGINE_TITLE  # bench/ is on sys.path (csm_peers.py puts it there)
from rapidflow_peer import Peer


def compare(rf: dict[str, Any], wms: dict[str, dict[str, Any]],
            patched: bool = True) -> tuple[str, list[str]]:
    """The check column and the mismatch messages of one workload.

    Parameters
    ----------
    rf : dict
        :func:`rapidflow_runs`'s result (``per_update`` None: totals only).
    wms : dict
        :func:`run_warpmatch`'s result per engine.
    patched : bool, optional
        False when the check variant's patch failed: "totals ok (no patch)".

    Returns
    -------
    check : str
        The table's check column.
    problems : list of str
        Every count difference found (empty if none).
    """
    problems: list[str] = []
    finished = {e: r for e, r in wms.items() if r["status"] == "ok"}
    partial = {e: r for e, r in wms.items() if r["status"] == "timeout"
               and r.get("per_update") is not None and r["per_update"].size}
    # the warpmatch engines among themselves, update by update, on what they share
    have = {e: r["per_update"] for e, r in {**finished, **partial}.items()}
    names = sorted(have)
    for a, b in zip(names, names[1:]):
        n = min(have[a].size, have[b].size)
        diff = np.flatnonzero(have[a][:n] != have[b][:n])
        if diff.size:
            i = int(diff[0])
            problems.append(f"warpmatch {ENGINE_TITLE[a]} and {ENGINE_TITLE[b]} differ at "
                            f"{diff.size} updates (first: update {i}: {have[a][i]} vs "
                            f"{have[b][i]})")
    if rf["status"] == "crash":
        return ("MISMATCH" if problems else "peer crash"), problems
    if rf["status"] == "timeout":
        return ("MISMATCH" if problems else "peer timeout"), problems
    if rf["status"] != "ok":
        return ("MISMATCH" if problems else "peer error"), problems
    pu = rf.get("per_update")
    for e, r in {**finished, **partial}.items():
        mine = r["per_update"]
        if pu is not None:
            diff = np.flatnonzero(mine != pu[:mine.size])
            if diff.size:
                i = int(diff[0])
                problems.append(f"{ENGINE_TITLE[e]} differs from RapidFlow at {diff.size} of "
                                f"{mine.size} updates (first: update {i}: warpmatch "
                                f"{int(mine[i])}, RapidFlow {int(pu[i])})")
        elif e in finished and int(mine.sum()) != rf["count"]:
            problems.append(f"{ENGINE_TITLE[e]} total {int(mine.sum()):,} != RapidFlow's "
                            f"Result count {rf['count']:,}")
    if problems:
        return "MISMATCH", problems
    if not finished:
        if pu is not None and partial:
            done = max(r["per_update"].size for r in partial.values())
            return f"wm timeout, prefix ok ({done:,} upd)", problems
        if any(r["status"] == "error" for r in wms.values()):
            return "wm error", problems
        return "wm timeout", problems
    if pu is not None:
        return "per-update ok", problems
    return ("totals ok" if patched else "totals ok (no patch)"), problems


def _rate(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _secs(x: float) -> str:
    return f"{x:.2f}" if x >= 1 else f"{x:.3g}"


def _ratio(x: float) -> str:
    return f"{x:.3g}x"


def make_row(wl_name: str, qname: str, n: int, rf: dict[str, Any], wms: dict[str, dict[str, Any]],
             engines: list[str], limit: float, wm_limit: float) -> dict[str, Any]:
    """The table cells and the numbers behind them for one workload."""
    row: dict[str, Any] = {"workload": f"{wl_name} / {qname}", "updates": n}
    delta = rf["count"] if rf["status"] == "ok" else next(
        (int(r["per_update"].sum()) for r in wms.values() if r["status"] == "ok"), None)
    row["changed"] = delta
    rf_rate = n / rf["seconds"] if rf["status"] == "ok" and rf["seconds"] else None
    row["rf_rate"] = rf_rate
    cells = [row["workload"], f"{n:,}", "—" if delta is None else f"{delta:,}"]
    if rf["status"] == "ok":
        cells += [_secs(rf["seconds"]), _rate(rf_rate)]
    else:
        word = {"timeout": f">{limit:g}", "crash": "crash"}.get(rf["status"], "error")
        cells += [word, "t/o" if rf["status"] == "timeout" else word]
    ratios: dict[str, float | None] = {}
    ratio_cells = []
    for e in engines:
        r = wms.get(e)
        if r is None:
            cells.append("skip")
            ratio_cells.append("—")
            ratios[e] = None
            continue
        rate = n / r["seconds"] if r["status"] == "ok" and r["seconds"] else None
        r["rate"] = rate
        if r["status"] == "ok":
            cells.append(_rate(rate) + ("*" if r.get("jit_in_timing") else ""))
        elif r["status"] == "timeout":
            # the rate over the batches it finished, shown for information only
            pr = r.get("partial_rate")
            cells.append("t/o" + (f" (~{_rate(pr)})" if pr else ""))
        else:
            cells.append("error")
        ratios[e] = None
        if rate is not None and rf_rate is not None:
            ratios[e] = rate / rf_rate
            ratio_cells.append(_ratio(ratios[e]))
        elif rate is not None and rf["status"] == "timeout":
            # RapidFlow needed more than `limit` s for the stream: its rate < n / limit
            ratio_cells.append(">" + _ratio(rate / (n / limit)))
        elif r["status"] == "timeout" and rf_rate is not None:
            ratio_cells.append("<" + _ratio((n / wm_limit) / rf_rate))
        else:
            ratio_cells.append("—")
    row["ratios"] = ratios
    row["cells"] = cells + ratio_cells
    return row


def print_table(rows: list[dict[str, Any]], engines: list[str]) -> None:
    """The markdown table and the geometric means of the ratio columns."""
    head = (["workload", "updates", "Σ|Δ| embeddings", "RapidFlow s", "RapidFlow upd/s"]
            + [f"wm {ENGINE_TITLE[e]} upd/s" for e in engines]
            + [f"{ENGINE_TITLE[e]}/RF" for e in engines] + ["check"])
    lines = [r["cells"] + [r["check"]] for r in rows]
    widths = [max(len(h), *(len(x[i]) for x in lines)) if lines else len(h)
              for i, h in enumerate(head)]
    right = [False] + [True] * (len(head) - 2) + [False]

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if r else c.ljust(w)
                                 for c, w, r in zip(cells, widths, right)) + " |"
    print(fmt(head))
    print("|" + "|".join(("-" * (w + 1) + ":") if r else (":" + "-" * (w + 1))
                         for w, r in zip(widths, right)) + "|")
    for x in lines:
        print(fmt(x))
    print()
    for e in engines:
        vals = [r["ratios"][e] for r in rows if r["ratios"].get(e)]
        if vals:
            gm = math.exp(sum(math.log(v) for v in vals) / len(vals))
            print(f"geometric mean {ENGINE_TITLE[e]}/RF: {gm:.3g}x over {len(vals)} workload(s) "
                  "where both finished")
        else:
            print(f"geometric mean {ENGINE_TITLE[e]}/RF: n/a (no workload where both finished)")


def strip_arrays(res: dict[str, Any]) -> dict[str, Any]:
    """A result dict without numpy arrays (for JSON)."""
    return {k: v for k, v in res.items() if not isinstance(v, np.ndarray)}


def write_json(args: argparse.Namespace, raw: list[dict[str, Any]], skipped: list[str],
               peer: Peer, engines: list[str], limit: float, wm_limit: float) -> None:
    """``--json``: the arguments, the peer, the results so far and the skipped workloads
    (written beside and then renamed: a file is never half written)."""
    doc = {"args": vars(args), "rapidflow": {"plain": str(peer.plain),
                                             "check": str(peer.check) if peer.check else None,
                                             "note": peer.note},
           "engines": engines, "time_limit": limit, "wm_time_limit": wm_limit,
           "cpu_count": os.cpu_count(), "results": raw, "skipped": skipped}
    tmp = Path(args.json + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=_json_default))
    os.replace(tmp, args.json)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, Path):
        return str(o)
    raise TypeError(type(o).__name__)
