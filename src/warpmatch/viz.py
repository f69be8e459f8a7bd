"""Pictures: matches drawn with their neighbourhood, and a stream's counts over time.

Map of the module:

- :class:`MatchDrawing` — what a picture of matches shows: the first matches of
  a query (from :func:`warpmatch.match` with a limit), the data vertices within
  ``hops`` of them (breadth-first over the graph's adjacency, capped at
  ``max_vertices``), the edges among those vertices, and which vertex and edge
  each match uses. :func:`match_drawing` builds it; it is the one seam the two
  renderers below share.
- :func:`to_dot` — a drawing as Graphviz DOT text (needs nothing installed);
  :func:`draw` — a drawing on a matplotlib Axes (needs the ``viz`` extra).
- :func:`save_matches` — :func:`match_drawing` written to ``.dot``/``.gv``,
  ``.png``, ``.svg`` or ``.pdf`` by extension: what ``warpmatch show`` runs.
- :class:`StreamCounts` / :func:`read_stream_counts` — per-update counts read
  from a ``warpmatch stream -o`` file (one row per update with
  ``--counts-only``, or one row per match, summed per update).
- :func:`plot_stream` — the running count and the per-update +/- of a stream:
  what ``warpmatch plot-stream`` runs.

Match vertices are filled with their match's colour (the first match that uses
them) and labelled with the data vertex id (``id:label`` on a labeled graph)
over the query vertex names they play; the data edges a match uses are drawn
thick in its colour, the rest of the neighbourhood thin and grey.

Examples
--------
>>> import warpmatch as wm
>>> from warpmatch.viz import match_drawing, to_dot
>>> g = wm.Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3], ids=[10, 20, 30, 40])
>>> d = match_drawing(g, "a-b, b-c, c-a", limit=1, backend="reference")
>>> d.ids.tolist(), len(d.edges), int((d.match_edge >= 0).sum())
([10, 20, 30, 40], 4, 3)
>>> '"30" -- "40"' in to_dot(d)
True
"""
from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .errors import BackendUnavailableError, InputFormatError, WarpmatchError

__all__ = ["MatchDrawing", "match_drawing", "to_dot", "draw", "save_matches",
           "StreamCounts", "read_stream_counts", "plot_stream",
           "DOT_SUFFIXES", "IMAGE_SUFFIXES"]

#: file suffixes written as Graphviz DOT text
DOT_SUFFIXES = (".dot", ".gv")
#: file suffixes drawn by matplotlib
IMAGE_SUFFIXES = (".png", ".svg", ".pdf")
#: one colour per match, cycled (matplotlib's "tab10", so DOT and images agree)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_PLAIN_FILL, _PLAIN_EDGE = "#e8e8e8", "#b0b0b0"
#: most bins of the per-update +/- panel; longer streams are summed into this many bins
_MAX_BINS = 400


def _matplotlib() -> Any:
    """matplotlib, or an error naming the extra that installs it."""
    try:
        import matplotlib
    except ImportError:
        raise BackendUnavailableError(
            "drawing PNG/SVG/PDF needs matplotlib, which is not installed: "
            "pip install 'warpmatch[viz]' (a .dot file for Graphviz needs nothing)") from None
    return matplotlib


def _new_figure(width: float, height: float, rows: int = 1) -> tuple[Any, Any]:
    """A figure not registered with pyplot (no GUI backend, nothing kept alive)."""
    _matplotlib()
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True) if rows > 1 else fig.add_subplot()
    return fig, axes


# ----------------------------------------------------------------- matches
@dataclass(frozen=True, eq=False)
class MatchDrawing:
    """What a picture of matches shows; built by :func:`match_drawing`.

    Attributes
    ----------
    ids : numpy.ndarray
        int64[V]: the drawn data vertices, in the graph file's id space; match
        vertices first (in match order), then the neighbourhood in
        breadth-first order.
    vertex_labels : numpy.ndarray or None
        int32[V]: their labels, ``None`` for an unlabeled graph.
    edges : numpy.ndarray
        int64[E, 2]: the data edges among the drawn vertices, as positions in
        ``ids`` (each undirected edge once; directed edges tail, head).
    edge_labels : numpy.ndarray or None
        int32[E], ``None`` for a graph without edge labels.
    matches : numpy.ndarray
        int64[R, k]: the drawn matches, column ``j`` the data vertex (file id)
        of query vertex ``j``, as :func:`warpmatch.match` lists them.
    match_of : numpy.ndarray
        int64[V]: the first match that uses each vertex, -1 for the rest.
    match_edge : numpy.ndarray
        int64[E]: the first match that maps a query edge onto each edge, -1
        for the rest.
    roles : tuple of str
        Per vertex, the query vertex names it plays (``"a"``, ``"a/c"`` when
        several matches give it different roles, ``""`` for none).
    query_names : tuple of str
    query_name, graph_name : str
    directed : bool
    mode : str
        ``"embeddings"`` or ``"subgraphs"``.
    induced : bool
    hops : int
    capped : bool
        ``True`` when the neighbourhood was cut at ``max_vertices``.
    note : str
        One line for people: what was drawn and what was cut.
    """

    ids: np.ndarray
    vertex_labels: np.ndarray | None
    edges: np.ndarray
    edge_labels: np.ndarray | None
    matches: np.ndarray
    match_of: np.ndarray
    match_edge: np.ndarray
    roles: tuple[str, ...]
    query_names: tuple[str, ...]
    query_name: str
    graph_name: str
    directed: bool
    mode: str
    induced: bool
    hops: int
    capped: bool
    note: str

    def vertex_text(self, i: int) -> str:
        """The label of drawn vertex ``i``: ``id`` (``id:label``), then its roles on a new line."""
        head = str(int(self.ids[i]))
        if self.vertex_labels is not None:
            head += f":{int(self.vertex_labels[i])}"
        return head + (f"\n{self.roles[i]}" if self.roles[i] else "")


def _neighbourhood(g: Any, seeds: np.ndarray, hops: int, max_vertices: int
                   ) -> tuple[np.ndarray, bool]:
    """Internal ids: ``seeds`` (all kept), then breadth-first layers up to ``hops`` away,
    cut at ``max_vertices``; and whether it was cut.

    A layer is filled round-robin over the vertices it grows from (one new neighbour of
    each in turn), so a cut layer still shows some surroundings of every match vertex
    instead of the first hub's neighbours only.
    """
    order = [int(v) for v in seeds]
    seen = set(order)
    frontier = list(order)
    for _ in range(hops):
        if not frontier:
            break
        seen_arr = np.fromiter(seen, np.int64, len(seen))
        lists = []
        for v in frontier:
            row = g.neighbors(v)
            if g.directed:
                row = np.union1d(row, g.in_neighbors(v))
            new = row[~np.isin(row, seen_arr)]
            if new.size:
                lists.append(new)
        nxt: list[int] = []
        ptr = [0] * len(lists)
        active = list(range(len(lists)))
        while active and len(order) < max_vertices:
            still = []
            for n_done, li in enumerate(active):
                if len(order) >= max_vertices:
                    still += active[n_done:]
                    break
                lst, p = lists[li], ptr[li]
                while p < lst.size and int(lst[p]) in seen:   # already taken from another list
                    p += 1
                if p < lst.size:
                    w = int(lst[p])
                    seen.add(w)
                    order.append(w)
                    nxt.append(w)
                    p += 1
                ptr[li] = p
                if p < lst.size:
                    still.append(li)
            active = still
        if active:     # the cap was reached with neighbours left: they may all be drawn already
            seen_arr = np.fromiter(seen, np.int64, len(seen))
            if any((~np.isin(lists[li][ptr[li]:], seen_arr)).any() for li in active):
                return np.asarray(order, np.int64), True
        frontier = nxt
    return np.asarray(order, np.int64), False


def _induced_edges(g: Any, verts: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Edges of ``g`` among ``verts`` (positions into ``verts``) and their labels."""
    srt = np.argsort(verts, kind="stable")
    vs = verts[srt]
    pairs: list[tuple[int, int]] = []
    labels: list[int] = []
    for i, v in enumerate(verts.tolist()):
        lo = int(g.indptr[v])
        row = g.indices[lo:int(g.indptr[v + 1])]
        pos = np.searchsorted(row, vs)       # each drawn vertex looked up in v's sorted row
        hit = pos < row.size
        hit[hit] = row[pos[hit]] == vs[hit]
        for j, p in zip(srt[hit].tolist(), pos[hit].tolist()):
            if g.directed or verts[j] > v:   # an undirected edge once
                pairs.append((i, j))
                if g.edge_labels is not None:
                    labels.append(int(g.edge_labels[lo + p]))
    edges = np.asarray(pairs, np.int64).reshape(-1, 2)
    elab = None if g.edge_labels is None else np.asarray(labels, np.int32)
    return edges, elab


def match_drawing(graph: Any, query: Any, limit: int = 3, hops: int = 1,
                  max_vertices: int = 60, mode: str = "subgraphs", induced: bool = False,
                  backend: str = "auto", anchors: Mapping[Any, Any] | None = None
                  ) -> MatchDrawing:
    """Find the first matches of a query and collect what a picture of them shows.

    Parameters
    ----------
    graph : Graph, str, os.PathLike or networkx graph
        The data graph, as for :func:`warpmatch.count`.
    query : Query, str, os.PathLike or networkx graph
        The query, as for :func:`warpmatch.count`.
    limit : int, optional
        Draw the first ``limit`` matches :func:`warpmatch.match` lists. The
        default is 3.
    hops : int, optional
        Also draw the data vertices up to ``hops`` edges away from a match
        vertex (either direction in a directed graph), and every edge among the
        drawn vertices. The default is 1; 0 draws the matches alone.
    max_vertices : int, optional
        Stop adding neighbourhood vertices at this many drawn vertices (match
        vertices are always drawn); ``note`` says when it cut. The default is 60.
    mode : {"subgraphs", "embeddings"}, optional
        The default, ``"subgraphs"``, draws each distinct subgraph once;
        ``"embeddings"`` also draws its automorphic copies (the same vertices
        in other roles).
    induced, backend, anchors
        As in :func:`warpmatch.count`.

    Returns
    -------
    MatchDrawing

    Raises
    ------
    QueryError, GraphError, BackendUnavailableError
        As :func:`warpmatch.match`; also for a negative ``limit`` or ``hops``,
        or ``max_vertices`` < 1.

    Examples
    --------
    >>> import warpmatch as wm
    >>> g = wm.Graph.from_edges([0, 1, 2, 2, 3], [1, 2, 0, 3, 4])   # triangle, 2-edge tail
    >>> d = match_drawing(g, "triangle", limit=1, hops=2, backend="reference")
    >>> sorted(d.ids.tolist()), d.roles[:3]
    ([0, 1, 2, 3, 4], ('0', '1', '2'))
    >>> match_drawing(g, "triangle", hops=2, max_vertices=4, backend="reference").note
    'triangle in graph: 1 match (subgraphs, non-induced), 2-hop neighbourhood cut at 4 vertices'
    """
    from .api import as_graph, as_query, match
    from .errors import QueryError

    if int(limit) < 0 or int(hops) < 0:
        raise QueryError(f"limit and hops must be >= 0, not {limit} and {hops}")
    if int(max_vertices) < 1:
        raise QueryError(f"max_vertices must be >= 1, not {max_vertices}")
    g = as_graph(graph)
    q = as_query(query, g)
    batches = list(match(g, q, mode=mode, induced=induced, backend=backend, anchors=anchors,
                         limit=int(limit)))
    rows = (np.concatenate(batches) if batches else np.zeros((0, q.k), np.int64))[:int(limit)]
    inner = g.to_internal(rows.ravel()).reshape(rows.shape).astype(np.int64)
    _, first = np.unique(inner.ravel(), return_index=True)
    seeds = inner.ravel()[np.sort(first)]                  # match vertices, in match order
    verts, capped = _neighbourhood(g, seeds, int(hops), int(max_vertices))
    edges, elab = _induced_edges(g, verts)

    where = {int(v): i for i, v in enumerate(verts.tolist())}
    match_of = np.full(verts.size, -1, np.int64)
    roles: list[list[str]] = [[] for _ in range(verts.size)]
    for r, row in enumerate(inner.tolist()):
        for j, v in enumerate(row):
            i = where[v]
            if match_of[i] < 0:
                match_of[i] = r
            if q.names[j] not in roles[i]:
                roles[i].append(q.names[j])
    edge_at = {(int(a), int(b)): e for e, (a, b) in enumerate(edges.tolist())}
    match_edge = np.full(len(edges), -1, np.int64)
    for r, row in enumerate(inner.tolist()):
        for u, w in q.edges.tolist():
            a, b = where[row[u]], where[row[w]]
            e = edge_at.get((a, b), -1 if g.directed else edge_at.get((b, a), -1))
            if e >= 0 and match_edge[e] < 0:
                match_edge[e] = r

    kind = "induced" if induced else "non-induced"
    note = (f"{q.name} in {g.name}: {len(rows):,} match{'' if len(rows) == 1 else 'es'} "
            f"({mode}, {kind})")
    if hops:
        note += f", {hops}-hop neighbourhood"
        if capped:
            note += f" cut at {verts.size:,} vertices"
    return MatchDrawing(
        ids=g.to_external(verts).astype(np.int64),
        vertex_labels=None if g.vertex_labels is None else g.vertex_labels[verts],
        edges=edges, edge_labels=elab, matches=rows.astype(np.int64), match_of=match_of,
        match_edge=match_edge, roles=tuple("/".join(x) for x in roles),
        query_names=tuple(q.names), query_name=q.name, graph_name=g.name,
        directed=bool(g.directed), mode=mode, induced=bool(induced), hops=int(hops),
        capped=capped, note=note)


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(drawing: MatchDrawing) -> str:
    """The drawing as Graphviz DOT text (``dot -Tsvg``, ``neato -Tpng``, ...).

    Parameters
    ----------
    drawing : MatchDrawing

    Returns
    -------
    str
        A ``graph`` (``digraph`` for a directed graph) whose nodes are named by
        data vertex id; match vertices and edges carry their match's colour.

    Examples
    --------
    >>> import warpmatch as wm
    >>> g = wm.Graph.from_edges([0, 1, 2], [1, 2, 0])
    >>> print(to_dot(match_drawing(g, "a-b, b-c, c-a", backend="reference")).splitlines()[0])
    graph "warpmatch" {
    """
    d = drawing
    arrow = "->" if d.directed else "--"
    out = [f'{"digraph" if d.directed else "graph"} "warpmatch" {{',
           f"  graph [label={_dot_quote(d.note)}, labelloc=t, fontsize=12, overlap=false];",
           f'  node [shape=circle, style=filled, fillcolor="{_PLAIN_FILL}", '
           f'color="{_PLAIN_EDGE}", fontsize=10, margin=0.02];',
           f'  edge [color="{_PLAIN_EDGE}"];']
    for i in range(d.ids.size):
        attrs = [f"label={_dot_quote(d.vertex_text(i))}"]
        r = int(d.match_of[i])
        if r >= 0:
            c = PALETTE[r % len(PALETTE)]
            attrs += [f'fillcolor="{c}"', 'color="#000000"', 'fontcolor="#ffffff"',
                      "penwidth=2"]
        out.append(f"  {_dot_quote(str(int(d.ids[i])))} [{', '.join(attrs)}];")
    for e, (a, b) in enumerate(d.edges.tolist()):
        attrs = []
        r = int(d.match_edge[e])
        if r >= 0:
            attrs += [f'color="{PALETTE[r % len(PALETTE)]}"', "penwidth=3"]
        if d.edge_labels is not None:
            attrs.append(f"label={_dot_quote(str(int(d.edge_labels[e])))}")
        tail = f" [{', '.join(attrs)}]" if attrs else ""
        out.append(f"  {_dot_quote(str(int(d.ids[a])))} {arrow} "
                   f"{_dot_quote(str(int(d.ids[b])))}{tail};")
    out.append("}")
    return "\n".join(out) + "\n"


def draw(drawing: MatchDrawing, ax: Any = None, seed: int = 0) -> Any:
    """Draw the matches and their neighbourhood on a matplotlib Axes.

    Parameters
    ----------
    drawing : MatchDrawing
    ax : matplotlib.axes.Axes, optional
        Where to draw. The default, ``None``, makes a new figure (not
        registered with pyplot; reach it as ``ax.figure``).
    seed : int, optional
        Seed of the spring layout (networkx), so a picture is reproducible.
        The default is 0.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    BackendUnavailableError
        matplotlib is not installed (``pip install 'warpmatch[viz]'``).
    """
    _matplotlib()
    import networkx as nx
    from matplotlib.collections import LineCollection
    from matplotlib.patches import FancyArrowPatch

    d = drawing
    n = d.ids.size
    if ax is None:
        side = min(12.0, 4.0 + 0.08 * n)
        _, ax = _new_figure(side, side)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(map(tuple, d.edges.tolist()))
    pos = nx.spring_layout(G, seed=seed) if n else {}
    xy = np.array([pos[i] for i in range(n)]).reshape(-1, 2)
    is_m = d.match_edge >= 0
    for emph in (False, True):          # plain edges below match edges
        sel = np.flatnonzero(is_m == emph)
        if not sel.size:
            continue
        colours = [PALETTE[int(d.match_edge[e]) % len(PALETTE)] if emph else _PLAIN_EDGE
                   for e in sel]
        width = 3.0 if emph else 0.8
        if d.directed:
            for e, c in zip(sel.tolist(), colours):
                a, b = d.edges[e]
                ax.add_patch(FancyArrowPatch(tuple(xy[a]), tuple(xy[b]), arrowstyle="-|>",
                                             mutation_scale=12, color=c, lw=width,
                                             shrinkA=9, shrinkB=9, zorder=1 + emph))
        else:
            segs = xy[d.edges[sel]]
            ax.add_collection(LineCollection(segs, colors=colours, linewidths=width,
                                             zorder=1 + emph))
    if d.edge_labels is not None:
        for e, (a, b) in enumerate(d.edges.tolist()):
            mid = (xy[a] + xy[b]) / 2
            ax.text(mid[0], mid[1], str(int(d.edge_labels[e])), fontsize=6, ha="center",
                    va="center", color="#555555", zorder=3)
    is_v = d.match_of >= 0
    fill = [PALETTE[int(r) % len(PALETTE)] if r >= 0 else _PLAIN_FILL for r in d.match_of]
    if n:
        ax.scatter(xy[:, 0], xy[:, 1], s=np.where(is_v, 420, 160), c=fill,
                   edgecolors=np.where(is_v, "#000000", _PLAIN_EDGE), linewidths=1.0,
                   zorder=4)
    for i in range(n):
        ax.text(xy[i, 0], xy[i, 1], d.vertex_text(i), fontsize=7 if is_v[i] else 5,
                ha="center", va="center", color="#ffffff" if is_v[i] else "#333333",
                zorder=5)
    ax.set_title(textwrap.fill(d.note, 64), fontsize=9)
    ax.set_aspect("equal")
    ax.margins(0.08)
    ax.set_axis_off()
    return ax


def _picture_format(path: str | os.PathLike) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in DOT_SUFFIXES:
        return "dot"
    if suffix in IMAGE_SUFFIXES:
        return suffix[1:]
    raise WarpmatchError(f"{os.fspath(path)!r}: cannot tell the picture format; use "
                         f"{', '.join(DOT_SUFFIXES + IMAGE_SUFFIXES)}")


def _save_figure(fig: Any, path: str | os.PathLike, fmt: str) -> None:
    from ._writers import atomic_path
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=fmt, dpi=150)


def save_matches(graph: Any, query: Any, path: str | os.PathLike, **options: Any
                 ) -> MatchDrawing:
    """Draw the first matches of a query with their neighbourhood into a file.

    The format comes from the extension: ``.dot``/``.gv`` (Graphviz text,
    no dependency), ``.png``, ``.svg`` or ``.pdf`` (matplotlib). The file is
    written atomically (a temporary file, then a rename).

    Parameters
    ----------
    graph, query
        As in :func:`warpmatch.count`.
    path : str or os.PathLike
        The picture file.
    **options
        ``limit``, ``hops``, ``max_vertices``, ``mode``, ``induced``,
        ``backend``, ``anchors``: as in :func:`match_drawing`.

    Returns
    -------
    MatchDrawing
        What was drawn.

    Raises
    ------
    WarpmatchError
        An unknown extension (before any search).
    BackendUnavailableError
        An image format without matplotlib installed (before any search).

    Examples
    --------
    >>> import os, tempfile
    >>> import warpmatch as wm
    >>> g = wm.Graph.from_edges([0, 1, 2], [1, 2, 0])
    >>> out = os.path.join(tempfile.mkdtemp(), "t.dot")
    >>> save_matches(g, "triangle", out, backend="reference").note
    'triangle in graph: 1 match (subgraphs, non-induced), 1-hop neighbourhood'
    """
    fmt = _picture_format(path)
    if fmt != "dot":
        _matplotlib()                  # fail before the search, not after it
    d = match_drawing(graph, query, **options)
    if fmt == "dot":
        from ._writers import atomic_path
        with atomic_path(path) as tmp:
            tmp.write_text(to_dot(d), encoding="utf-8")
    else:
        ax = draw(d)
        _save_figure(ax.figure, path, fmt)
    return d


# ------------------------------------------------------------------ streams
@dataclass(frozen=True, eq=False)
class StreamCounts:
    """Per-update counts of a stream, as read by :func:`read_stream_counts`.

    Attributes
    ----------
    update : numpy.ndarray
        int64[N]: the update's index in the stream. From a file of match rows
        only the updates that changed some match appear.
    plus, minus : numpy.ndarray
        int64[N]: matches that appeared / disappeared with the update.
    valid : numpy.ndarray or None
        bool[N]: ``False`` for updates skipped as invalid; ``None`` when the
        file does not say (match rows).
    time : numpy.ndarray or None
        The updates' timestamps, if the stream had them.
    every_update : bool
        ``True`` when every update has a row (a ``--counts-only`` file).
    source : str or None
        The file's name, for titles.
    """

    update: np.ndarray
    plus: np.ndarray
    minus: np.ndarray
    valid: np.ndarray | None = None
    time: np.ndarray | None = None
    every_update: bool = True
    source: str | None = None

    def running(self, initial: int = 0) -> np.ndarray:
        """The count after each update: ``initial + cumsum(plus - minus)``."""
        return int(initial) + np.cumsum(self.plus - self.minus)


def _read_table(path: str | os.PathLike) -> Any:
    suffix = Path(path).suffix.lower()
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq
        return pq.read_table(path)
    if suffix == ".csv":
        import pyarrow.csv as pcsv
        return pcsv.read_csv(path)
    if suffix in (".jsonl", ".ndjson"):
        import pyarrow.json as pjson
        if os.path.getsize(path) == 0:   # a stream with no rows writes an empty JSON-lines file
            import pyarrow as pa
            return pa.table({"update": pa.array([], pa.int64())})
        return pjson.read_json(path)
    raise InputFormatError(os.fspath(path), None, "not a 'warpmatch stream -o' file: use "
                           ".parquet, .jsonl or .csv")


def read_stream_counts(path: str | os.PathLike) -> StreamCounts:
    """Per-update counts from a ``warpmatch stream -o`` file.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.parquet``, ``.jsonl`` or ``.csv`` file: written with
        ``--counts-only`` (columns ``update[, time], plus, minus, valid``), or
        without it (one row per match: ``update, sign[, time]`` and the query
        vertices), in which case rows are summed per update.

    Returns
    -------
    StreamCounts

    Raises
    ------
    InputFormatError
        The file has neither layout.
    """
    t = _read_table(path)
    cols = set(t.column_names)
    source = Path(path).name

    def col(name: str, dtype: Any = np.int64) -> np.ndarray:
        return np.asarray(t.column(name).to_numpy(zero_copy_only=False), dtype)

    has_time = "time" in cols
    if {"update", "plus", "minus"} <= cols:
        return StreamCounts(update=col("update"), plus=col("plus"), minus=col("minus"),
                            valid=col("valid", bool) if "valid" in cols else None,
                            time=col("time", None) if has_time else None, source=source)
    if {"update", "sign"} <= cols:
        upd, sign = col("update"), col("sign")
        keys, first, inv = np.unique(upd, return_index=True, return_inverse=True)
        plus = np.bincount(inv, weights=sign > 0, minlength=keys.size).astype(np.int64)
        minus = np.bincount(inv, weights=sign < 0, minlength=keys.size).astype(np.int64)
        return StreamCounts(update=keys, plus=plus, minus=minus,
                            time=col("time", None)[first] if has_time else None,
                            every_update=False, source=source)
    if cols == {"update"} and t.num_rows == 0:
        z = np.zeros(0, np.int64)
        return StreamCounts(update=z, plus=z, minus=z, source=source)
    raise InputFormatError(os.fspath(path), None,
                           "neither per-update counts (update, plus, minus) nor match rows "
                           f"(update, sign); columns: {', '.join(t.column_names)}")


def _bins(x: np.ndarray, by_update: bool) -> np.ndarray:
    """Bin edges for the +/- panel, at most _MAX_BINS bins: over update indices, a whole
    number of updates per bin (one while they fit); over time, equal widths."""
    lo, hi = float(x.min()), float(x.max())
    if by_update:
        width = max(1, -(-int(hi - lo + 1) // _MAX_BINS))
        return np.arange(lo - 0.5, hi + width, width)
    return np.linspace(lo, hi if hi > lo else lo + 1.0, _MAX_BINS + 1)


def plot_stream(deltas: StreamCounts | str | os.PathLike, output: str | os.PathLike | None = None,
                initial: int = 0, x: str = "auto", title: str | None = None) -> Any:
    """Plot a stream's running count and its per-update appeared/disappeared matches.

    Parameters
    ----------
    deltas : StreamCounts, str or os.PathLike
        Counts, or a ``warpmatch stream -o`` file (see :func:`read_stream_counts`).
    output : str or os.PathLike, optional
        Write the figure there (``.png``, ``.svg`` or ``.pdf``, atomically). The
        default, ``None``, only returns it.
    initial : int, optional
        The count before the stream (``initial_count`` of ``warpmatch stream
        --json``), which the file does not hold. The default is 0: the top
        panel then shows the net change.
    x : {"auto", "update", "time"}, optional
        The horizontal axis: the update's index, or its timestamp. The
        default, ``"auto"``, takes the time where the stream has one.
    title : str, optional
        The figure's title. The default names the file and the totals.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels sharing the horizontal axis: the count after each update
        (a step line), and the matches that appeared (up) and disappeared
        (down) per update, summed into at most 400 bins.

    Raises
    ------
    BackendUnavailableError
        matplotlib is not installed (``pip install 'warpmatch[viz]'``).
    WarpmatchError
        ``x="time"`` for a stream without timestamps.
    """
    _matplotlib()
    if output is not None and _picture_format(output) == "dot":
        raise WarpmatchError(f"{os.fspath(output)!r}: a stream plot is an image: use "
                             f"{', '.join(IMAGE_SUFFIXES)}")
    c = deltas if isinstance(deltas, StreamCounts) else read_stream_counts(deltas)
    if x not in ("auto", "update", "time"):
        raise WarpmatchError(f"x must be 'auto', 'update' or 'time', not {x!r}")
    if x == "time" and c.time is None:
        raise WarpmatchError("the stream has no timestamps: plot over the update index")
    use_time = c.time is not None and x != "update"
    xs = np.asarray(c.time if use_time else c.update, np.float64)
    fig, (top, bottom) = _new_figure(8.0, 5.0, rows=2)
    added, removed = int(c.plus.sum()), int(c.minus.sum())
    if title is None:
        what = "updates" if c.every_update else "updates that changed a match"
        title = (f"{c.source + ': ' if c.source else ''}{xs.size:,} {what}, +{added:,} / "
                 f"-{removed:,} matches")
        if c.valid is not None and not c.valid.all():
            title += f", {int((~c.valid).sum()):,} invalid skipped"
    fig.suptitle(title, fontsize=10)
    if xs.size:
        run = c.running(initial)
        top.step(np.concatenate([[xs[0]], xs]), np.concatenate([[initial], run]),
                 where="post", color=PALETTE[0], lw=1.2)
        edges = _bins(xs, by_update=not use_time)
        plus, _ = np.histogram(xs, bins=edges, weights=c.plus)
        minus, _ = np.histogram(xs, bins=edges, weights=c.minus)
        bottom.stairs(plus, edges, fill=True, color=PALETTE[2], label="appeared (+)")
        bottom.stairs(-minus, edges, fill=True, color=PALETTE[3], label="disappeared (-)")
        bottom.legend(loc="best", fontsize=8)
        width = edges[1] - edges[0]
        per = ("per update" if not use_time and width == 1 else
               f"per {width:.3g} time units" if use_time else f"per {int(width):,} updates")
        bottom.set_ylabel(f"matches {per}", fontsize=8)
    bottom.axhline(0, color="#777777", lw=0.6)
    top.set_ylabel("count" if initial else "count (net change)", fontsize=8)
    bottom.set_xlabel("time" if use_time else "update", fontsize=8)
    if output is not None:
        _save_figure(fig, output, _picture_format(output))
    return fig
