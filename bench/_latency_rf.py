"""RapidFlow's side of ``bench/latency.py`` (``--rapidflow``): set up, run, check, table cells.

Kept apart from ``latency.py`` only for length. RapidFlow is built, its files written
and its runs parsed by ``rapidflow_peer.py`` (as for ``csm_peers.py``, whose docstring
says which counts correspond); this module only wires those to one query of the
latency benchmark: :func:`rapidflow_setup` (once: the binaries, ``G_0`` and the ``max``
row's stream) < :func:`rapidflow_query` (one timed run per query, and the check run) <
:func:`rapidflow_check` (its counts against a mode's per-update counts) <
:func:`rapidflow_cells` (the table's two columns).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _csm_workloads  # noqa: E402 - by name, not _sibling.load: see its reconnections
import rapidflow_peer as rfp  # noqa: E402 - bench/ is not a package

def rapidflow_setup(path: str, src: str | None, build_dir: str | None, g0: Any, ups: Any,
                    workdir: Path) -> dict[str, Any]:
    """Resolve (build) RapidFlow and write ``G_0`` and ``ups`` in its formats.

    Parameters
    ----------
    path, src, build_dir : str or None
        ``--rapidflow``, ``--rapidflow-src`` and ``--peer-build-dir``, as in
        ``csm_peers.py`` (:func:`rapidflow_peer.resolve_peer`).
    g0 : warpmatch.Graph
        The graph the matchers start from.
    ups : warpmatch.stream.types.Updates
        The ``max`` row's updates.
    workdir : Path
        Where the files go (a temporary directory).

    Returns
    -------
    dict
        ``peer``, ``files`` (``graph``, ``stream``), ``workdir``, ``updates``,
        ``labeled`` / ``edge_labeled`` (for ``rf_query_problem``) and the counts of
        insertions that touch a vertex isolated in ``G_0`` or one that lost all its edges.
    """
    peer = rfp.resolve_peer(path, src, build_dir)
    files = {"graph": workdir / "g0.rf.graph", "stream": workdir / "stream.rf.txt"}
    # the same conversion as _csm_workloads.prepare_graph: internal ids 0..n-1, label 0 if none
    esrc, edst = g0.edges()
    rfp.write_rf_graph(files["graph"], g0.n, esrc, edst, g0.vertex_labels,
                       g0.edge_label_array())
    usrc, udst = g0.to_internal(ups.src), g0.to_internal(ups.dst)
    rfp.write_rf_stream(files["stream"], usrc, udst, ups.op, ups.label)
    # RapidFlow's crash condition (csm_peers.py): counted so that a crash can be read
    isolated, reconnect = _csm_workloads.reconnections(np.asarray(g0.degree), usrc, udst,
                                                       ups.op)
    return {"peer": peer, "files": files, "workdir": workdir, "updates": len(ups),
            "labeled": g0.vertex_labels is not None,
            "edge_labeled": g0.edge_label_array() is not None,
            "connect_isolated_in_g0": isolated, "reconnect_emptied": reconnect}


def rapidflow_query(side: dict[str, Any], query: str, directed: bool, limit: float
                    ) -> dict[str, Any]:
    """One timed RapidFlow run of ``query`` on ``side``'s files (and its check run).

    Parameters
    ----------
    side : dict
        :func:`rapidflow_setup`'s result.
    query : str
        The query as ``--queries`` gives it (what :class:`~warpmatch.ContinuousMatcher`
        resolves).
    directed : bool
        Whether ``G_0`` is directed (how the query is resolved).
    limit : float
        RapidFlow's ``-time_limit`` (seconds); the process is killed ``max(30, limit/2)``
        seconds later, as in ``csm_peers.py``.

    Returns
    -------
    dict
        :func:`rapidflow_peer.rapidflow_runs`'s result (``per_update``: the check
        variant's counts, or None) plus ``throughput`` (updates over its ``Query time``;
        None unless ``status`` is "ok" and the time is above 0), or ``status`` "skipped"
        with ``detail`` when ``rf_query_problem`` says it cannot run the query.
    """
    from warpmatch.query.io import resolve_query
    q = resolve_query(query, directed=directed)
    why = rfp.rf_query_problem(q, side["labeled"], side["edge_labeled"])
    if why:
        return {"status": "skipped", "detail": why, "per_update": None, "throughput": None}
    qdir = side["workdir"] / re.sub(r"[^\w.-]", "_", query)
    qdir.mkdir(exist_ok=True)
    files = dict(side["files"], query=qdir / "query.rf.graph")
    rfp.write_rf_query(files["query"], q)
    n = side["updates"]
    # one timed run: its spread between runs is in bench/README.md (csm_peers.py caveats)
    rf = rfp.rapidflow_runs(side["peer"], files, 1, limit, max(30.0, limit / 2), qdir, n)
    secs = rf.get("seconds")
    rf["throughput"] = n / secs if rf["status"] == "ok" and secs else None
    return rf


def rapidflow_check(rf: dict[str, Any], plus: np.ndarray, minus: np.ndarray, cut: bool
                    ) -> tuple[str, str | None]:
    """Compare RapidFlow's counts with one warpmatch mode's per-update counts.

    Parameters
    ----------
    rf : dict
        :func:`rapidflow_query`'s result.
    plus, minus : numpy.ndarray
        The mode's ``plus_counts`` and ``minus_counts`` per update (a prefix of the
        stream if it was cut by ``--time-limit``).
    cut : bool
        Whether the mode was cut (its total is then not RapidFlow's).

    Returns
    -------
    check : str
        What was compared and how it came out ("per-update ok", "totals ok", ...,
        "MISMATCH"), or why nothing was.
    problem : str or None
        The mismatch, if any.
    """
    if rf["status"] != "ok":
        return f"not compared (RapidFlow {rf['status']})", None
    # RapidFlow counts an update's appearing and disappearing embeddings alike
    mine = plus.astype(np.int64) + minus.astype(np.int64)
    pu = rf.get("per_update")
    if pu is not None:
        diff = np.flatnonzero(mine != pu[:mine.size])
        if diff.size:
            i = int(diff[0])
            return "MISMATCH", (f"differs from RapidFlow at {diff.size:,} of {mine.size:,} "
                                f"updates (first: update {i}: warpmatch {int(mine[i])}, "
                                f"RapidFlow {int(pu[i])})")
        return ("per-update ok" if not cut else
                f"per-update ok on the {mine.size:,} updates matched"), None
    if cut:
        return "not compared (warpmatch cut, RapidFlow gave its total only)", None
    if int(mine.sum()) != rf["count"]:
        return "MISMATCH", (f"total {int(mine.sum()):,} != RapidFlow's Result count "
                            f"{rf['count']:,}")
    return "totals ok", None


def rapidflow_cells(row: dict[str, Any]) -> list[str]:
    """The table's "RapidFlow upd/s" and "best mode / RapidFlow" cells of ``row``.

    "—" for rows without a RapidFlow run (rates other than ``max``); the ratio cell is
    the greedy mode's and fixed-4096's throughput over RapidFlow's (``*``: that mode was
    cut by ``--time-limit``); a RapidFlow timeout gives bounds from the ``Query time``
    it printed (its stream loop until the limit stopped it: it did not get through the
    updates in that time). Not from its limit: the limit also covers building its views
    of ``G_0``, which its Query time leaves out.
    """
    rf = row.get("rapidflow")
    if rf is None:
        return ["—", "—"]
    m = row["modes"]
    if rf["status"] == "ok" and rf["throughput"]:
        base, pre = rf["throughput"], ""
    elif rf["status"] == "timeout" and rf.get("seconds"):
        # it did not get through the updates in its Query time: its rate was below
        base, pre = row["updates"] / rf["seconds"], "<"
    else:
        return [rf["status"], "—"]
    ratios = " / ".join(("" if not pre else ">") + f"{m[k]['throughput'] / base:.3g}x"
                        + ("*" if m[k]["cut"] else "") for k in ("greedy", "fixed-4096"))
    return [f"{pre}{base:,.0f}", ratios]
