"""Update streams derived from data: the literature's two generators.

What is where
-------------
- :func:`make_stream` — a stream derived from a static graph by the method of the
  continuous-matching papers (GCSM §VI-A, following RapidFlow and Sun et al.'s
  in-depth study of CSM): a random fraction of the edges is left out and
  inserted, a random fraction of the rest deleted, both interleaved by a
  seeded shuffle;
- :func:`replay_temporal` — a timestamped message log such as SNAP's
  CollegeMsg (``src dst unix_time``) as a real stream: an edge appears with its
  first message and, with a window ``W``, expires ``W`` after its last one.

Both are re-exported by :mod:`warpmatch.stream.updates` (and ``warpmatch``).

How they differ from the papers: :func:`make_stream` keeps a vertex whose edges
are all held back (isolated), so ``G_0`` keeps the input's vertex set and ids,
and its counts are exact rather than binomial; the papers do not define
:func:`replay_temporal`'s expiry window (RapidFlow's own streams are
insert-only or random).
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from ..errors import InputCleanupWarning, InputFormatError
from ..graph.csr import Graph
from ..graph._base import _read_bytes, _Table
from .types import DELETE, INSERT, Updates

__all__ = ["make_stream", "replay_temporal", "FRACTION_SLACK"]

PathLike = str | os.PathLike
#: make_stream accepts insert_fraction + delete_fraction up to 1 plus this: room for the
#: rounding of fractions computed as 1 - x
FRACTION_SLACK = 1e-12


def make_stream(graph: Graph, insert_fraction: float = 0.1, delete_fraction: float = 0.05,
                seed: int = 0) -> tuple[Graph, Updates]:
    """Derive an update stream from a static graph (the seeds' methodology).

    As in the experiments of GCSM (§VI-A, after RapidFlow [15] and [34]): a
    random ``insert_fraction`` of the edges is removed from the graph and
    becomes the stream's insertions; a random ``delete_fraction`` of the
    edges, drawn from those that remain, becomes its deletions; the two are
    interleaved by a seeded shuffle. GCSM selects 10% of the edges and marks
    each an insertion or a deletion with equal probability:
    ``insert_fraction=delete_fraction=0.05`` is that setting, with exact
    rather than binomial counts. Unlike GCSM, a vertex whose edges are all
    held back stays (isolated), so ``G_0`` keeps the input's vertex set and
    ids. Deletions only remove edges of the initial graph and insertions only
    add removed edges, each once, so every update is valid in any order, and
    replaying the stream on the initial graph gives the input graph minus the
    deleted edges.

    Parameters
    ----------
    graph : Graph
        The source graph (directed or not, labeled or not).
    insert_fraction : float, optional
        Fraction of the edges that become insertions. The default is 0.1.
    delete_fraction : float, optional
        Fraction of the edges (of the input graph, drawn from those left in
        the initial graph) that become deletions. The default is 0.05.
    seed : int, optional
        The random seed. The default is 0.

    Returns
    -------
    initial : Graph
        ``G_0``: same vertices, ids, vertex labels and direction as ``graph``,
        without the edges to be inserted.
    updates : Updates
        In the graph's external id space, with edge labels if the graph has
        them; undirected edges are given in a random orientation.

    Raises
    ------
    ValueError
        If a fraction is outside [0, 1] or the two sum to more than 1.

    Examples
    --------
    >>> from warpmatch.graph import barabasi_albert
    >>> g0, ups = make_stream(barabasi_albert(100, 3, seed=1), 0.1, 0.05, seed=2)
    >>> g0.num_edges, len(ups), int((ups.op == 1).sum())
    (262, 44, 29)
    """
    for name, val in (("insert_fraction", insert_fraction), ("delete_fraction",
                                                            delete_fraction)):
        if not 0.0 <= float(val) <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {val}")
    if insert_fraction + delete_fraction > 1.0 + FRACTION_SLACK:
        raise ValueError(f"insert_fraction + delete_fraction must be <= 1, got "
                         f"{insert_fraction} + {delete_fraction}")
    rng = np.random.default_rng(seed)
    src, dst = graph.edges()
    elab = graph.edge_label_array()
    m = int(src.size)
    n_ins = int(round(insert_fraction * m))
    n_del = min(int(round(delete_fraction * m)), m - n_ins)
    perm = rng.permutation(m)
    ins = perm[:n_ins]
    keep = np.sort(perm[n_ins:])
    dele = rng.choice(keep, size=n_del, replace=False) if n_del else np.empty(0, np.int64)
    g0 = Graph.from_edges(src[keep], dst[keep], n=graph.n, vertex_labels=graph.vertex_labels,
                          edge_labels=None if elab is None else elab[keep],
                          directed=graph.directed, ids=graph.ids,
                          name=f"{graph.name}-G0", warn=False)
    which = np.concatenate([ins, dele]).astype(np.int64)
    ops = np.concatenate([np.full(n_ins, INSERT, np.int8), np.full(n_del, DELETE, np.int8)])
    order = rng.permutation(which.size)
    which, ops = which[order], ops[order]
    u, v = src[which], dst[which]
    if not graph.directed:
        flip = rng.random(which.size) < 0.5
        u, v = np.where(flip, v, u), np.where(flip, u, v)
    ups = Updates(src=graph.to_external(u).astype(np.int64),
                  dst=graph.to_external(v).astype(np.int64), op=ops,
                  label=None if elab is None else elab[which].astype(np.int32),
                  source=f"make_stream({graph.name}, seed={seed})")
    return g0, ups


def replay_temporal(path: PathLike, window: float | None = None, *,
                    directed: bool = False) -> tuple[Graph, Updates]:
    """Turn a timestamped message log (``src dst time`` lines) into an update stream.

    The input is SNAP's temporal format, e.g. CollegeMsg: one message per
    line, ``#`` comments, integer unix times. Messages are taken in time
    order (a stable sort, so the file need not be sorted). An edge is
    inserted by its first message; further messages while it is live insert
    nothing. With a ``window`` ``W`` the edge expires (a deletion at time
    ``t + W``) when ``W`` passes after its last message ``t`` without another
    one; a later message inserts it again. At equal times deletions come
    first. Expiries after the log's last message are not emitted (the stream
    ends with the log), so the final graph holds the edges live at its end.

    Parameters
    ----------
    path : str or os.PathLike
        The log (``.gz`` allowed); fields after the third are ignored.
    window : float, optional
        The time-to-live ``W`` (> 0) in the file's time unit. The default is
        ``None``: edges never expire.
    directed : bool, optional
        ``False`` (the default) treats ``u v`` and ``v u`` as one edge (the
        stream keeps the orientation of the message that inserts it);
        ``True`` keeps them apart.

    Returns
    -------
    initial : Graph
        ``G_0``: every vertex of the log, no edges (ids as in the file).
    updates : Updates
        With ``time`` (int64, or float64 for a non-integer window) and
        ``line`` (the message that caused each insertion; for a deletion,
        the last message before it).

    Raises
    ------
    InputFormatError
        For a malformed line (``file:line``) or a log without messages.

    Warns
    -----
    InputCleanupWarning
        When self-loop messages (``u u``) are dropped.
    """
    if window is not None and not float(window) > 0:
        raise ValueError(f"window must be > 0, got {window}")
    from .convert import _lines_of
    from .updates import _check_path     # (updates re-exports this module)
    source = _check_path(path)
    t = _Table(_read_bytes(source), source, ("source id", "target id", "timestamp"), 3,
               extra_error=False)
    if t.rows == 0:
        raise InputFormatError(source, None, "no message lines (only comments or blank lines)")
    s, d, tm = t.column(0), t.column(1), t.column(2)
    # CollegeMsg and its kin have integer times; the tokenizer rejects others with file:line
    loops = s == d
    if loops.any():
        warnings.warn(f"{source}: dropped {int(loops.sum())} self-loop messages",
                      InputCleanupWarning, stacklevel=2)
    rows = np.flatnonzero(~loops)
    s, d, tm = s[rows], d[rows], tm[rows]
    order = np.argsort(tm, kind="stable")
    s, d, tm, rows = s[order], d[order], tm[order], rows[order]
    ids = np.unique(np.concatenate([s, d, t.column(0), t.column(1)]))
    nvert = int(ids.size)
    a = np.searchsorted(ids, s)
    b = np.searchsorted(ids, d)
    if not directed:
        a, b = np.minimum(a, b), np.maximum(a, b)
    key = a.astype(np.int64) * np.int64(max(nvert, 1)) + b
    # group messages by edge, in time order within an edge; a session is a maximal
    # run of messages each within W of the previous one
    g = np.lexsort((np.arange(key.size), key))
    ks, ts = key[g], tm[g]
    new_edge = np.concatenate([[True], ks[1:] != ks[:-1]])
    if window is None:
        starts = new_edge
    else:
        gap = np.concatenate([[np.inf], (ts[1:] - ts[:-1]).astype(np.float64)])
        starts = new_edge | (gap >= float(window))
    ends = np.concatenate([starts[1:], [True]])
    ins_msg = g[starts]                      # message index (time order) of each insertion
    ins_t = tm[ins_msg]
    if window is None:
        del_msg = del_first = np.empty(0, np.int64)
        del_t = np.empty(0, tm.dtype)
    else:
        w = float(window)
        integral = w == int(w)
        last = g[ends]
        exp = tm[last] + (int(w) if integral else w)
        ended = exp <= tm[-1]                # expiries after the log's end are not emitted
        del_msg = last[ended]
        del_first = ins_msg[ended]           # a deletion names the edge as its insertion did
        del_t = exp[ended]
        if not integral:
            ins_t = ins_t.astype(np.float64)
    msg = np.concatenate([ins_msg, del_msg])
    ends_of = np.concatenate([ins_msg, del_first])
    ev_t = np.concatenate([ins_t, del_t])
    ev_op = np.concatenate([np.full(ins_msg.size, INSERT, np.int8),
                            np.full(del_msg.size, DELETE, np.int8)])
    # time order; at equal times deletions first; then by the message that caused it
    ev = np.lexsort((msg, ev_op, ev_t))
    msg, ends_of, ev_t, ev_op = msg[ev], ends_of[ev], ev_t[ev], ev_op[ev]
    g0 = Graph.from_edges(np.empty(0, np.int64), np.empty(0, np.int64), n=nvert,
                          directed=directed,
                          ids=None if (nvert == 0 or int(ids[-1]) == nvert - 1) else ids,
                          name=f"{Path(source).name.split('.')[0]}-G0")
    ups = Updates(src=s[ends_of].astype(np.int64), dst=d[ends_of].astype(np.int64), op=ev_op,
                  time=ev_t, line=_lines_of(t, rows[msg]), source=source)
    return g0, ups
