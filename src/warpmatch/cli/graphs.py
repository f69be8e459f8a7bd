"""``info``, ``convert``, ``generate``, ``patterns``: graphs and patterns."""
from __future__ import annotations

import os
import time
import warnings
from typing import Any, Callable

import click

from ._common import (
    CONTEXT_SETTINGS,
    _debug_option,
    _emit_json,
    _graph_line,
    _graph_options,
    _json_option,
    _load_graph,
    cli,
)


# ---------------------------------------------------------------------- info
@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@_graph_options
@_json_option
@_debug_option
def info(graph: str, fmt: str | None, directed: bool, vertex_labels: str | None,
         as_json: bool) -> None:
    """Describe GRAPH: size, degrees, labels, what was dropped while reading.

    GRAPH may be a partition directory (warpmatch partition): then each part's
    vertices, edges and device bytes are listed too.

    \b
    Examples:
      warpmatch info web.txt
      warpmatch info votes.txt --directed --json
      warpmatch info web.parts
    """
    from .partition import load_source
    g, load_s, pg = load_source(graph, fmt, directed, vertex_labels)
    facts = dict(g.summary())
    rep = g.report
    facts.update(self_loops_dropped=int(rep.self_loops), duplicates_dropped=int(rep.duplicates),
                 load_seconds=round(load_s, 6))
    width = max(len(k) for k in facts)
    for key, val in facts.items():
        shown = f"{val:,}" if isinstance(val, int) and not isinstance(val, bool) else (
            f"{val:.3f}" if isinstance(val, float) else val)
        click.echo(f"{key.replace('_', ' '):<{width}} : {shown}")
    if pg is not None:
        parts = [{"part": p, "vertices": int(pg.subgraph(p).n),
                  "edges": int(pg.subgraph(p).num_edges), "bytes": int(b)}
                 for p, b in enumerate(pg.part_bytes())]
        click.echo(f"partitions : {pg.parts} ({pg.method}), {pg.cut_edges:,} cut edges, "
                   f"{pg.boundary.size:,} boundary vertices")
        for d in parts:
            click.echo(f"  part {d['part']}: {d['vertices']:,} vertices, {d['edges']:,} "
                       f"edges, {d['bytes']:,} device bytes")
        facts["partitions"] = {"parts": pg.parts, "method": pg.method,
                               "cut_edges": pg.cut_edges, "per_part": parts}
    from ..graph.labelparts import present_labels
    if len(present_labels(g)) > 1:
        _edge_label_partitions(g, facts)
    if as_json:
        facts["graph"] = graph
        _emit_json(facts)


def _edge_label_partitions(g: Any, facts: dict) -> None:
    """Print (and add to ``facts``) each edge label's partition: a query whose edges all
    name labels is matched on their partitions only (graph/labelparts.py); and what the
    partitions weigh in GENEVA's interval-PCSR (graph/intervals.py) against the plain CSR
    and GSI's hash layout."""
    from ..graph.intervals import interval_pcsr
    from ..graph.labelparts import HASH_SLOTS
    store = interval_pcsr(g)
    sizes = store.sizes()
    total = store.nbytes
    hashed = sum(p.hash_bytes for p in sizes)
    click.echo(f"edge label partitions : {len(sizes)} in interval-PCSR (GENEVA): "
               f"{total:,} bytes, {total / store.csr_bytes:.2f}x the plain CSR's "
               f"{store.csr_bytes:,}; {1 - total / hashed:.0%} less than a hash layout of "
               f"{HASH_SLOTS} slots a vertex ({hashed:,}); renaming {store.map_bytes:,} "
               "bytes")
    for p in sizes:
        click.echo(f"  label {p.label}: {p.entries:,} entries, {p.vertices:,} vertices in "
                   f"{p.intervals:,} interval{'s' if p.intervals != 1 else ''}, "
                   f"{p.bytes:,} bytes")
    facts["edge_label_partitions"] = [
        {"label": p.label, "entries": p.entries, "vertices": p.vertices,
         "intervals": p.intervals, "bytes": p.bytes, "hash_bytes": p.hash_bytes}
        for p in sizes]
    facts["interval_pcsr"] = {"bytes": total, "csr_bytes": store.csr_bytes,
                              "hash_bytes": hashed, "map_bytes": store.map_bytes}


# ------------------------------------------------------------------- convert
@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("source")
@click.argument("target")
@click.option("--from", "from_fmt", default=None, metavar="FORMAT",
              help="Input format (default: from the extension/content).")
@click.option("--to", "to_fmt", default=None, metavar="FORMAT",
              help="Output format (default: from TARGET's extension; .wmg = binary cache).")
@click.option("--directed", is_flag=True, help="Read SOURCE as directed.")
@click.option("--vertex-labels", type=click.Path(dir_okay=False), default=None,
              help="File with one label per vertex.")
@click.option("--drop-labels", is_flag=True,
              help="Write a labeled graph to a format that cannot hold its labels (.txt "
                   "edge lists: vertex labels; .mtx: vertex and edge labels) without them. "
                   "Without this flag such a conversion is refused.")
@click.option("--degree-order", is_flag=True,
              help="Store the vertices renumbered by ascending degree (.wmg only; the "
                   "file's ids are kept and every id shown stays the same). Counts that "
                   "would renumber a copy (count --vertex-order auto/degree) then use the "
                   "file as it is, in every process and on Dask workers, instead of "
                   "building the copy once per process.")
@_debug_option
def convert(source: str, target: str, from_fmt: str | None, to_fmt: str | None,
            directed: bool, vertex_labels: str | None, drop_labels: bool,
            degree_order: bool) -> None:
    """Convert graph SOURCE to TARGET (e.g. an edge list to the fast .wmg binary cache).

    The binary cache loads memory-mapped, near-instantly; use it for graphs
    you query more than once. Labels are never dropped silently: a labeled
    graph converts to .wmg, .graph, .parquet or .csv, which keep them; to an
    edge list or Matrix Market only with --drop-labels (as 'generate' refuses
    --labels for those formats).

    \b
    Examples:
      warpmatch convert web.txt web.wmg
      warpmatch convert yeast.graph yeast.parquet
      warpmatch convert yeast.graph yeast.txt --drop-labels   (the structure only)
      warpmatch convert web.txt web.wmg --degree-order        (counted without a copy)
    """
    import dataclasses

    from ..graph.formats import output_graph_format
    out_fmt = output_graph_format(target, to_fmt)     # fail before reading SOURCE
    if degree_order and out_fmt != "binary":
        # a text or table format is read back numbered by file id: the order would be lost
        raise click.UsageError(f"--degree-order needs a .wmg target (the binary format "
                               f"keeps the internal numbering); {target} is {out_fmt}")
    if vertex_labels and not drop_labels:             # labeled for sure: fail before reading too
        _refuse_lossy(_labels_lost(out_fmt, True, False), target, source)
    g, load_s = _load_graph(source, from_fmt, directed, vertex_labels)
    lost = _labels_lost(out_fmt, g.vertex_labels is not None, g.edge_labels is not None)
    if lost and not drop_labels:
        _refuse_lossy(lost, target, source)
    if lost:
        # dropped here, as asked, so that write_graph has nothing left to warn about
        drop: dict[str, Any] = {}
        if "vertex labels" in lost:
            drop["vertex_labels"] = None
        if "edge labels" in lost:
            drop.update(edge_labels=None, in_edge_labels=None)
        g = dataclasses.replace(g, **drop)
    ordered = ""
    if degree_order:
        from ..graph.reorder import degree_ordered
        t0 = time.perf_counter()
        name = g.name
        h = degree_ordered(g)
        took = "already so" if h is g else f"{time.perf_counter() - t0:.2f} s"
        # the copy's name says "[by degree]"; the file keeps the source's name
        g = dataclasses.replace(h, name=name)
        ordered = f"; ids ascending by degree, file ids kept ({took})"
    t0 = time.perf_counter()
    _write_graph_atomic(g, target, out_fmt)
    dropped = f"; {' and '.join(lost)} dropped (--drop-labels)" if lost else ""
    click.echo(f"wrote {target}: {_graph_line(g)}{dropped}{ordered}; read {load_s:.2f} s, "
               f"wrote {time.perf_counter() - t0:.2f} s")


# ------------------------------------------------------------------ generate
@cli.group(context_settings=CONTEXT_SETTINGS)
def generate() -> None:
    """Generate a seeded random graph (power-law RMAT or Barabási–Albert).

    \b
    Examples:
      warpmatch generate rmat big.wmg --scale 20 --edge-factor 16 --seed 1
      warpmatch generate ba ba.txt --n 100000 --m 8 --labels 16 --zipf
    """


def _label_options(f: Callable) -> Callable:
    f = click.option("--zipf", is_flag=True,
                     help="Zipf-skewed labels, vertex and edge (default: uniform).")(f)
    f = click.option("--edge-labels", type=click.IntRange(min=1), default=None,
                     help="Give edges random labels 0..N-1 (uniform: GENEVA's set-up; "
                          "matched on the query's labels' partitions).")(f)
    f = click.option("--labels", type=click.IntRange(min=1), default=None,
                     help="Give vertices random labels 0..N-1.")(f)
    f = click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")(f)
    return f


#: output formats that keep vertex labels (edge lists and Matrix Market drop them)
_LABEL_FORMATS = ("binary", "tve", "parquet", "csv")
#: output formats that keep edge labels (an edge list writes them as a third column)
_EDGE_LABEL_FORMATS = _LABEL_FORMATS + ("edgelist",)
#: the extensions of _LABEL_FORMATS, for messages
_LABEL_EXTENSIONS = ".wmg, .graph, .parquet or .csv"


def _labels_lost(fmt: str, vertex_labels: bool, edge_labels: bool) -> list[str]:
    """What of a graph's labels format ``fmt`` cannot hold (one rule for convert and generate)."""
    lost = []
    if vertex_labels and fmt not in _LABEL_FORMATS:
        lost.append("vertex labels")
    if edge_labels and fmt not in _EDGE_LABEL_FORMATS:
        lost.append("edge labels")
    return lost


def _refuse_lossy(lost: list[str], target: str, whose: str) -> None:
    """Refuse a conversion that would drop labels, saying what and how to keep them."""
    if lost:
        raise click.UsageError(
            f"{target} cannot hold the {' and '.join(lost)} of {whose} (an edge list keeps "
            f"edge labels only, Matrix Market none); write {_LABEL_EXTENSIONS} to keep them, "
            "or pass --drop-labels to write the graph without them")


def _write_graph_atomic(g: Any, target: str, fmt: str) -> None:
    """Write ``g`` to ``target`` atomically; warnings name ``target``, not the temporary file."""
    from .._writers import atomic_path
    from ..graph import write_graph
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with atomic_path(target) as tmp:
            write_graph(g, tmp, format=fmt)
    for w in caught:
        warnings.warn(str(w.message).replace(os.fspath(tmp), target), w.category)


def _check_generate_target(out: str, labels: int | None, edge_labels: int | None) -> str:
    """OUT's format, checked before generating (a bad name must not cost the generation)."""
    from ..graph.formats import output_graph_format
    fmt = output_graph_format(out)
    if _labels_lost(fmt, bool(labels), False):
        raise click.UsageError(f"--labels needs an output format that keeps vertex labels "
                               f"({_LABEL_EXTENSIONS}); {out} would drop them")
    if _labels_lost(fmt, False, bool(edge_labels)):
        raise click.UsageError(f"--edge-labels needs an output format that keeps edge labels "
                               f"({_LABEL_EXTENSIONS} or an edge list); {out} would drop them")
    return fmt


def _finish_generated(g: Any, out: str, fmt: str, labels: int | None, edge_labels: int | None,
                      zipf: bool, seed: int, t0: float) -> None:
    import dataclasses

    from ..graph import random_labels
    from ..graph.generators import with_labels
    dist = "zipf" if zipf else "uniform"
    if labels:
        g = dataclasses.replace(g, vertex_labels=random_labels(g.n, labels, dist, seed))
    if edge_labels:
        # a seed of their own, so that adding --edge-labels leaves the vertex labels as
        # they were
        g = with_labels(g, edge_labels=random_labels(g.num_edges, edge_labels, dist,
                                                     seed + 1))
    _write_graph_atomic(g, out, fmt)
    lab = f", {labels} {dist} labels" if labels else ""
    lab += f", {edge_labels} {dist} edge labels" if edge_labels else ""
    click.echo(f"wrote {out}: {_graph_line(g)}{lab}; {time.perf_counter() - t0:.2f} s")


@generate.command("rmat", context_settings=CONTEXT_SETTINGS)
@click.argument("out")
@click.option("--scale", type=click.IntRange(1, 34), default=16, show_default=True,
              help="2**scale vertices.")
@click.option("--edge-factor", type=click.IntRange(min=1), default=16, show_default=True,
              help="Edges per vertex (before duplicates are dropped).")
@_label_options
@_debug_option
def generate_rmat(out: str, scale: int, edge_factor: int, seed: int, labels: int | None,
                  edge_labels: int | None, zipf: bool) -> None:
    """A power-law RMAT/Kronecker graph with 2**SCALE vertices, written to OUT.

    OUT's extension picks the format; .wmg (the binary cache) loads fastest.
    Labels need a format that keeps them: .wmg, .graph, .parquet or .csv (edge
    labels also an edge list, as a third column).

    \b
    Examples:
      warpmatch generate rmat big.wmg --scale 20 --edge-factor 16 --seed 1
      warpmatch generate rmat labeled.wmg --scale 16 --labels 8 --zipf
      warpmatch generate rmat elabeled.wmg --scale 20 --edge-labels 12
      warpmatch generate rmat small.txt --scale 10
    """
    from ..graph import rmat
    fmt = _check_generate_target(out, labels, edge_labels)
    t0 = time.perf_counter()
    with warnings.catch_warnings():   # RMAT draws duplicates by design; not worth a warning
        warnings.simplefilter("ignore")
        g = rmat(scale, edge_factor, seed=seed)
    _finish_generated(g, out, fmt, labels, edge_labels, zipf, seed, t0)


@generate.command("ba", context_settings=CONTEXT_SETTINGS)
@click.argument("out")
@click.option("--n", "n", type=click.IntRange(min=2), default=100_000, show_default=True,
              help="Number of vertices.")
@click.option("--m", "m", type=click.IntRange(min=1), default=8, show_default=True,
              help="Edges each new vertex attaches.")
@_label_options
@_debug_option
def generate_ba(out: str, n: int, m: int, seed: int, labels: int | None,
                edge_labels: int | None, zipf: bool) -> None:
    """A Barabási–Albert preferential-attachment graph, written to OUT.

    OUT's extension picks the format; .wmg (the binary cache) loads fastest.
    Labels need a format that keeps them: .wmg, .graph, .parquet or .csv (edge
    labels also an edge list, as a third column).

    \b
    Examples:
      warpmatch generate ba ba.wmg --n 100000 --m 8 --seed 1
      warpmatch generate ba ba.graph --n 20000 --m 5 --labels 16 --zipf
    """
    from ..graph import barabasi_albert
    fmt = _check_generate_target(out, labels, edge_labels)
    t0 = time.perf_counter()
    g = barabasi_albert(n, m, seed=seed)
    _finish_generated(g, out, fmt, labels, edge_labels, zipf, seed, t0)


# ------------------------------------------------------------------ patterns
@cli.command(context_settings=CONTEXT_SETTINGS)
@_json_option
@_debug_option
def patterns(as_json: bool) -> None:
    """List the named patterns usable as QUERY.

    \b
    Examples:
      warpmatch patterns
      warpmatch patterns --json
      warpmatch count web.txt tailed-triangle
    """
    from ..query import get_pattern, list_patterns
    rows = []
    for name, desc in list_patterns():
        q = get_pattern(name)
        rows.append({"name": name, "vertices": int(q.k), "edges": int(q.m),
                     "description": desc, "dsl": q.to_dsl()})
    w = max([len(r["name"]) for r in rows] + [7])
    click.echo(f"{'pattern':<{w}}  {'k':>2}  {'m':>3}  description")
    for r in rows:
        click.echo(f"{r['name']:<{w}}  {r['vertices']:>2}  {r['edges']:>3}  {r['description']}")
    if as_json:
        _emit_json({"patterns": rows})


