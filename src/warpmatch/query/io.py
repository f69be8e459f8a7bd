"""Reading and writing query files, and turning any query specification into a Query.

:func:`read_query_file` reads the labeled ``t/v/e`` format of the
subgraph-matching literature (Sun & Luo, SIGMOD 2020, and the query sets of
the yeast/human/hprd benchmarks) through the one ``t/v/e`` parser of the
package, :func:`warpmatch.graph.formats.parse_tve`; :func:`write_query_file`
writes that format, or DSL text for what it cannot hold (wildcard vertex labels,
directed queries).

:func:`resolve_query` is the single entry point the API and the CLI use for a
user's QUERY argument; the order in which it tries the possibilities is
documented there.
"""
from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputCleanupWarning, InputFormatError, QueryError
from .dsl import parse_query, pattern_name_error
from .model import ANY, Query
from .patterns import get_pattern, is_pattern_name, read_pattern_collection

__all__ = ["read_query_file", "write_query_file", "resolve_query", "check_direction"]


def read_query_file(path: str | os.PathLike[str]) -> Query:
    """Read a query graph in the ``t/v/e`` format.

    ::

        t 0 4          # header (informational; the v/e lines are trusted)
        v 0 16         # v <vertex id> <vertex label> [degree]
        v 1 3
        e 0 1 0        # e <u> <v> [edge label]

    Parameters
    ----------
    path : str or os.PathLike
        The file. Vertex ids may be any integers; the query's vertex ``i`` is
        the ``i``-th ``v`` line and is named by its id in the file.

    Returns
    -------
    Query
        Undirected, named after the file's stem. Vertex labels are kept as
        read (they are the data graph's labels), and edge labels too: the
        labeled benchmark queries carry ``e u v 0`` like their data graphs, so
        reading both ways keeps them comparable. Lines without an edge label
        give ``-1`` (any).

    Raises
    ------
    InputFormatError
        For a malformed file (from the parser, with file:line), an edge naming
        a vertex without a ``v`` line, a self-loop, an edge listed twice with
        different labels, or a disconnected or empty query.

    Warns
    -----
    InputCleanupWarning
        If an edge is listed more than once with the same label (kept once).
    """
    from ..graph.formats import parse_tve   # graph < query: a lower layer, imported lazily

    path = os.fspath(path)
    data = parse_tve(Path(path), source=path)
    ids = np.asarray(data.vertex_ids, dtype=np.int64)
    if ids.size == 0:
        raise InputFormatError(path, None, "the query file has no 'v' lines (no vertices)")
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    if np.any(sorted_ids[1:] == sorted_ids[:-1]):
        dup = int(sorted_ids[1:][sorted_ids[1:] == sorted_ids[:-1]][0])
        raise InputFormatError(path, None, f"vertex {dup} has more than one 'v' line")
    src = np.asarray(data.src, dtype=np.int64)
    dst = np.asarray(data.dst, dtype=np.int64)

    def to_index(x: np.ndarray) -> np.ndarray:
        pos = np.searchsorted(sorted_ids, x)
        pos_c = np.minimum(pos, sorted_ids.size - 1)
        bad = sorted_ids[pos_c] != x
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise InputFormatError(path, None, f"edge {int(src[i])}-{int(dst[i])} names vertex "
                                   f"{int(x[i])}, which has no 'v' line")
        return order[pos_c]

    u, w = to_index(src), to_index(dst)
    el = (np.full(src.size, ANY, dtype=np.int32) if data.edge_labels is None
          else np.asarray(data.edge_labels, dtype=np.int32))
    # An undirected file may list an edge twice (even both ways); keep one copy of each
    # identical (edge, label), and let Query reject the same edge with two labels.
    lo, hi = np.minimum(u, w), np.maximum(u, w)
    rows = np.stack([lo, hi, el.astype(np.int64)], axis=1)
    _, first = np.unique(rows, axis=0, return_index=True)
    if first.size < rows.shape[0]:
        warnings.warn(f"{path}: {rows.shape[0] - first.size} duplicate query edge(s) dropped",
                      InputCleanupWarning, stacklevel=2)
        keep = np.sort(first)
        u, w, el = u[keep], w[keep], el[keep]
    try:
        return Query(k=int(ids.size), edges=np.stack([u, w], axis=1), edge_labels=el,
                     vertex_labels=np.asarray(data.vertex_labels, dtype=np.int32),
                     directed=False, names=tuple(str(int(i)) for i in ids),
                     name=Path(path).stem)
    except QueryError as e:
        raise InputFormatError(path, None, str(e)) from None


#: extensions :func:`write_query_file` writes as t/v/e; any other is DSL text
TVE_EXTENSIONS = (".graph", ".tve")


def write_query_file(query: Query, path: str | os.PathLike[str]) -> None:
    """Write ``query`` to ``path``, atomically (a temporary file, then a rename).

    ``.graph`` and ``.tve`` get the ``t/v/e`` format of :func:`read_query_file`
    (``t k m``, ``v i label degree``, ``e u v [label]``; the edge-label column
    only when some query edge has one), vertex ``i`` being the query's
    ``i``-th vertex; any other extension gets DSL text (:meth:`Query.to_dsl`).
    Either reads back as the same query (vertex names aside: t/v/e names them
    ``0..k-1``).

    Parameters
    ----------
    query : Query
    path : str or os.PathLike

    Raises
    ------
    QueryError
        A ``t/v/e`` target for a query that format cannot hold: a directed
        query, or a vertex or edge label ``-1`` (any) among labeled ones; the
        message names DSL text (e.g. a ``.txt`` file) instead.
    """
    path = os.fspath(path)
    if path.lower().endswith(TVE_EXTENSIONS):
        vl = np.asarray(query.vertex_labels, dtype=np.int64)
        el = np.asarray(query.edge_labels, dtype=np.int64)
        why = ("it is directed" if query.directed
               else "a vertex has no label (any)" if np.any(vl == ANY)
               else "some edges have a label and others none" if (
                   np.any(el == ANY) and np.any(el != ANY)) else "")
        if why:
            raise QueryError(f"{path}: the t/v/e format cannot hold this query ({why}); "
                             "write DSL text instead (e.g. a .txt file)")
        deg = np.bincount(np.asarray(query.edges, dtype=np.int64).ravel(), minlength=query.k)
        lines = [f"t {query.k} {query.m}"]
        lines += [f"v {i} {int(vl[i])} {int(deg[i])}" for i in range(query.k)]
        labeled = bool(el.size) and not np.any(el == ANY)
        for (u, w), lab in zip(np.asarray(query.edges).tolist(), el.tolist()):
            lines.append(f"e {u} {w} {lab}" if labeled else f"e {u} {w}")
        text = "\n".join(lines) + "\n"
    else:
        text = query.to_dsl() + "\n"
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def check_direction(query: Query, directed: bool, graph_name: str | None = None) -> None:
    """Raise :class:`QueryError` if the query's direction does not fit the data graph's.

    The one wording of this error, shared by :func:`resolve_query`, the
    planner and the API.

    Parameters
    ----------
    query : Query
    directed : bool
        Whether the data graph is directed.
    graph_name : str, optional
        The graph's name for the message. The default is ``None`` ("the graph").
    """
    g = "the graph" if graph_name is None else f"the graph {graph_name!r}"
    if directed and not query.directed:
        raise QueryError(
            f"{g} is directed but the query {query.name!r} is undirected: a directed graph "
            "needs directed query edges (write 'a->b' in the query DSL, e.g. "
            "'a->b, b->c, c->a' for a directed triangle)")
    if query.directed and not directed:
        raise QueryError(
            f"the query {query.name!r} is directed but {g} is undirected (read the graph "
            "with directed=True, or --directed)")


_TVE_LINE = re.compile(r"^\s*[tve]\s+[-+]?\d")
_COLLECTION_LINE = re.compile(r"^\s*\S+\s+\d+\s+\d+\s*-\s*\d+")


def _first_content_line(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            s = line.strip()
            if s and not s.startswith(("#", "%")):
                return s
    return ""


def _not_a_file(path: str) -> OSError:
    """The error for a query path that is not a file: a directory, or nothing at all."""
    if os.path.isdir(path):
        return IsADirectoryError(f"{path!r} is a directory, not a query file")
    return FileNotFoundError(f"no such query file: {path}")


def _read_path(path: str) -> Query:
    """A query from an existing file, by content: t/v/e, pattern collection or DSL."""
    first = _first_content_line(path)
    if not first:
        # said here, naming the file: the DSL parser would only say "the query text is empty"
        blank = not Path(path).read_text(encoding="utf-8", errors="replace").strip()
        what = "is empty" if blank else "holds only comments"
        raise InputFormatError(path, None, f"the query file {what}: write DSL text "
                               "('a-b, b-c, c-a'), t/v/e lines or one pattern line in it")
    if _TVE_LINE.match(first):
        return read_query_file(path)
    if _COLLECTION_LINE.match(first):
        qs = read_pattern_collection(path)
        if len(qs) != 1:
            names = ", ".join(q.name for q in qs[:10]) + (", ..." if len(qs) > 10 else "")
            raise QueryError(f"{path} holds {len(qs)} patterns ({names}); a query must be "
                             "one pattern (read them with read_pattern_collection)")
        return qs[0]
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        return parse_query(text, name=Path(path).stem)
    except QueryError as e:
        raise QueryError(f"{path}: {e}") from None   # the caret shows the line, not the file


def _looks_like_path(text: str) -> bool:
    """DSL text never holds '/', '\\' or '.' outside a '#' comment; paths usually do."""
    return "#" not in text and re.search(r"[/\\.]", text) is not None


def resolve_query(spec: Any, directed: bool | None = None) -> Query:
    """Turn any query specification into a :class:`~warpmatch.query.Query`.

    Parameters
    ----------
    spec : Query, networkx graph, str or os.PathLike
        Tried in this order:

        1. a :class:`Query` is returned as it is;
        2. a networkx ``Graph``/``DiGraph`` goes through :meth:`Query.from_networkx`;
        3. a string that is a named pattern (``"triangle"``, ``"5-clique"``,
           see :func:`~warpmatch.query.patterns.list_patterns`) is that
           pattern, even if a file of that name exists (write ``./triangle``
           for the file);
        4. a path (``os.PathLike``, or a string naming an existing file) is
           read by content: ``t``/``v``/``e`` lines are a query file
           (:func:`read_query_file`), ``NAME VERTICES u-v, ...`` lines a
           pattern collection that must hold exactly one pattern, anything
           else DSL text;
        5. any other string is DSL text (:func:`~warpmatch.query.dsl.parse_query`).
           A string naming a directory is an error, and so is one that looks
           like a path (it holds a ``/``, ``\\`` or ``.``, which DSL text
           cannot) but does not exist. Text that reads as a pattern name, or
           a typo of one, is an unknown pattern with the closest names
           suggested, never a one-vertex or one-edge query: a lone bare word
           (``"trinagle"``; a one-vertex query carries a label, ``"a:3"``) or
           a single edge shaped like a name (``"4-clqiue"``, ``"k-clique"``,
           ``"tailed-triangel"``); the exact rule is in
           :mod:`warpmatch.query.dsl`.
    directed : bool or None, optional
        The data graph's direction. ``True`` rejects an undirected query
        (a directed graph needs ``->`` edges); ``None`` and ``False`` accept
        any query (a directed query on an undirected graph is rejected by
        the caller, which knows the graph's name: see :func:`check_direction`).
        The default is ``None``.

    Returns
    -------
    Query

    Raises
    ------
    QueryError
        For unknown pattern names (with the closest names suggested), DSL
        errors (from a file: the message starts with its path), a collection
        with several patterns, or a direction mismatch.
    InputFormatError
        For a malformed or empty query file.
    FileNotFoundError
        For a path that does not exist.
    IsADirectoryError
        For a path that is a directory.
    TypeError
        For any other type of ``spec``.

    Examples
    --------
    >>> resolve_query("diamond").m
    5
    >>> resolve_query("a-b, b-c, c-a").names
    ('a', 'b', 'c')
    >>> resolve_query("4-clqiue")
    Traceback (most recent call last):
    ...
    warpmatch.errors.QueryError: unknown pattern '4-clqiue'; did you mean '4-clique'? ...
    """
    if isinstance(spec, Query):
        q = spec
    elif hasattr(spec, "nodes") and hasattr(spec, "edges") and hasattr(spec, "is_directed"):
        q = Query.from_networkx(spec, name=str(getattr(spec, "name", "") or "query"))
    elif isinstance(spec, os.PathLike):
        path = os.fspath(spec)
        if not os.path.isfile(path):
            raise _not_a_file(path)
        q = _read_path(path)
    elif isinstance(spec, str):
        text = spec.strip()
        if is_pattern_name(text):
            q = get_pattern(text)
        elif os.path.isfile(text):
            q = _read_path(text)
        elif os.path.isdir(text) or _looks_like_path(text):
            raise _not_a_file(text)
        else:
            # a lone word may also have been meant as a file without an extension:
            # say there is none, which the parser alone could not
            also = "" if re.search(r"[-\s]", text) else "(and no query file of that name exists)"
            err = pattern_name_error(text, also)
            if err is not None:
                raise err
            q = parse_query(spec)
    else:
        raise TypeError(f"a query must be a Query, a networkx graph, a pattern name, a path or "
                        f"DSL text, not {type(spec).__name__}")
    if directed:
        check_direction(q, True)
    return q
