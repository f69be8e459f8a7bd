"""The graph writers: :func:`write_graph` and the format it picks for a target.

Map: :func:`output_graph_format` (by extension, never sniffed) < the edge table
of a graph (:func:`_edge_table`, vertex rows where needed) and the text writers
(:func:`_write_text_blocks`, :func:`_write_mtx`) < :func:`write_graph`. The
formats are described in :mod:`.formats`, which re-exports both functions.
"""
from __future__ import annotations

import gzip
import json
import os
import warnings
from typing import Any

import numpy as np

from ..errors import GraphError
from ._base import _EXT, LABEL_COLUMNS, PathLike, _inner_suffix, _is_gz
from ._tables import _PQ_META_KEY
from .csr import Graph

__all__ = ["write_graph", "output_graph_format"]

def _vertex_rows_needed(g: Graph) -> np.ndarray | None:
    """Internal ids that need a vertex row in an edge table (all if labeled; else isolated)."""
    if g.vertex_labels is not None:
        return np.arange(g.n)
    iso = np.flatnonzero(g.degree == 0)
    return iso if iso.size else None


def _edge_table(g: Graph) -> Any:
    import pyarrow as pa
    src, dst = g.edges()
    s = g.to_external(src).astype(np.int64)
    d = g.to_external(dst).astype(np.int64)
    el = g.edge_label_array()
    vrows = _vertex_rows_needed(g)
    cols: dict[str, Any] = {}
    if vrows is None:
        cols["src"] = pa.array(s)
        cols["dst"] = pa.array(d)
        if el is not None:
            cols["label"] = pa.array(el.astype(np.int32))
        return pa.table(cols)
    k = vrows.size
    m = s.size
    cols["src"] = pa.array(np.concatenate([s, g.to_external(vrows).astype(np.int64)]))
    mask = np.concatenate([np.zeros(m, bool), np.ones(k, bool)])
    cols["dst"] = pa.array(np.concatenate([d, np.zeros(k, np.int64)]), mask=mask)
    if el is not None:
        cols["label"] = pa.array(np.concatenate([el, np.zeros(k, np.int32)]).astype(np.int32),
                                 mask=mask)
    if g.vertex_labels is not None:
        cols["vertex_label"] = pa.array(
            np.concatenate([np.zeros(m, np.int32), g.vertex_labels[vrows]]).astype(np.int32),
            mask=~mask)
    return pa.table(cols)


def _write_text_blocks(path: str, blocks: list[tuple[str | None, Any]]) -> None:
    """Write space-separated integer tables (each optionally under a comment) to ``path``."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with pa.output_stream(path, compression="detect") as out:
        for comment, table in blocks:
            if comment:
                out.write(comment.encode("utf-8"))
            if table is not None and table.num_rows:
                pcsv.write_csv(table, out, opts)


def _lossy(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=3)


def _write_mtx(graph: Graph, path: str) -> None:
    """Matrix Market pattern matrix (``symmetric`` when undirected), 1-based indices."""
    import scipy.io
    import scipy.sparse as sp
    lost = [what for what, gone in (
        ("vertex labels", graph.vertex_labels is not None),
        ("edge labels", graph.edge_labels is not None),
        ("vertex ids (renumbered 1..n)", graph.ids is not None and not np.array_equal(
            graph.ids, np.arange(1, graph.n + 1)))) if gone]
    if lost:
        _lossy(f"Matrix Market cannot hold the {' and '.join(lost)} of {graph.name!r}; "
               f"they were not written to {path}")
    src, dst = graph.edges()
    if not graph.directed:
        src, dst = np.maximum(src, dst), np.minimum(src, dst)   # lower triangle
    A = sp.coo_array((np.ones(src.size, np.int8), (src, dst)), shape=(graph.n, graph.n))
    with _open_out(path) as fh:
        scipy.io.mmwrite(fh, A, field="pattern",
                         symmetry="general" if graph.directed else "symmetric")


def _open_out(path: str) -> Any:
    return gzip.open(path, "wb") if _is_gz(path) else open(path, "wb")


def output_graph_format(path: PathLike, format: str | None = None) -> str:
    """The format :func:`write_graph` writes to ``path``: ``format``, else by extension.

    Unlike :func:`graph_format` it never sniffs (the file does not exist yet),
    so callers can check a target before doing the work that produces it.

    Parameters
    ----------
    path : str or os.PathLike
        The target file; a trailing ``.gz`` is looked through.
    format : str, optional
        Force a format (as :func:`graph_format`). The default is ``None``.

    Returns
    -------
    str
        The format name.

    Raises
    ------
    GraphError
        If the format cannot be told from the extension, or is unknown.

    Examples
    --------
    >>> output_graph_format("g.wmg"), output_graph_format("g.txt.gz")
    ('binary', 'edgelist')
    >>> output_graph_format("g", "csv")
    'csv'
    """
    path_s = os.fspath(path)
    if not format and _inner_suffix(path_s) not in _EXT:
        raise GraphError(f"cannot tell the output format of {path_s!r} from its extension; "
                         f"use one of {', '.join(sorted(_EXT))} (or format=...)")
    from .formats import graph_format   # (formats imports this module)
    return graph_format(path_s, format)


def write_graph(graph: Graph, path: PathLike, format: str | None = None) -> None:
    """Write ``graph`` to a file, vertex ids mapped back to the external ids.

    Parameters
    ----------
    graph : Graph
    path : str or os.PathLike
        The target. Format by extension: ``.wmg`` binary cache (everything,
        memory-mapped on load), ``.parquet``/``.pq`` and ``.csv`` edge tables
        (``src, dst[, label]``, plus vertex rows with an empty ``dst`` and a
        ``vertex_label`` when the graph has vertex labels or isolated
        vertices), ``.graph``/``.tve`` labeled t/v/e, ``.txt``/``.el``/
        ``.edges``/``.tsv``/``.snap`` edge list (``u v[ label]``), ``.mtx``
        Matrix Market (indices 1..n: the ids are not kept). A ``.gz`` suffix
        compresses the text formats.
    format : str, optional
        Force a format (as :func:`graph_format`). The default is ``None``.

    Raises
    ------
    GraphError
        If the format cannot be told from the extension.

    Warns
    -----
    UserWarning
        When the format cannot hold part of the graph, which is then not
        written: vertex labels in an edge list; vertex labels, edge labels and
        non-``1..n`` ids in Matrix Market (``.mtx``, a pattern matrix,
        ``symmetric`` when undirected).

    Notes
    -----
    Binary output is written atomically (temporary file and rename). Other
    formats write ``path`` directly; ``warpmatch convert`` wraps every format
    in its own atomic rename.
    """
    path_s = os.fspath(path)
    fmt = output_graph_format(path_s, format)
    if fmt == "binary":
        from .binary import save_binary
        save_binary(graph, path_s)
        return
    if fmt == "parquet":
        import pyarrow.parquet as pq
        table = _edge_table(graph)
        meta = json.dumps({"directed": graph.directed, "name": graph.name, "n": graph.n})
        table = table.replace_schema_metadata({_PQ_META_KEY: meta.encode()})
        pq.write_table(table, path_s)
        return
    if fmt == "csv":
        import pyarrow as pa
        import pyarrow.csv as pcsv
        with pa.output_stream(path_s, compression="detect") as out:
            pcsv.write_csv(_edge_table(graph), out,
                           pcsv.WriteOptions(quoting_style="none"))
        return
    if fmt == "mtx":
        _write_mtx(graph, path_s)
        return
    import pyarrow as pa
    src, dst = graph.edges()
    cols = {"u": pa.array(graph.to_external(src).astype(np.int64)),
            "v": pa.array(graph.to_external(dst).astype(np.int64))}
    el = graph.edge_label_array()
    if el is not None:
        cols["l"] = pa.array(el.astype(np.int32))
    kind = "directed" if graph.directed else "undirected"
    if fmt == "tve":
        vl = (graph.vertex_labels if graph.vertex_labels is not None
              else np.zeros(graph.n, np.int32))
        vtab = pa.table({"t": pa.repeat("v", graph.n),
                         "id": pa.array(graph.to_external(np.arange(graph.n)).astype(np.int64)),
                         "label": pa.array(vl.astype(np.int32)),
                         "deg": pa.array(graph.degree.astype(np.int64))})
        etab = pa.table({"t": pa.repeat("e", src.size), **cols})
        header = (f"# {graph.name}: {kind}"
                  f"{'' if graph.vertex_labels is not None else ', unlabeled (label 0)'}\n"
                  f"t {graph.n} {graph.num_edges}\n")
        _write_text_blocks(path_s, [(header, vtab), (None, etab)])
        return
    if graph.vertex_labels is not None:
        _lossy(f"an edge list cannot hold the vertex labels of {graph.name!r}; they were not "
               f"written to {path_s} (write .wmg, .graph, .parquet or .csv to keep them)")
    iso = int(np.count_nonzero(graph.degree == 0))
    header = (f"# {graph.name}: {graph.n} vertices, {graph.num_edges} edges, {kind}"
              f"{LABEL_COLUMNS if el is not None else ''}"
              f"{f'; {iso} isolated vertices are not listed' if iso else ''}\n")
    _write_text_blocks(path_s, [(header, pa.table(cols))])
