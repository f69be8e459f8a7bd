"""``count``, ``match``, ``explain``: searching a graph for a query."""
from __future__ import annotations

import time

import click

from ._common import (
    CONTEXT_SETTINGS,
    _debug_option,
    _emit_json,
    _graph_line,
    _graph_options,
    _json_option,
    _load_graph,
    _search_options,
    cli,
    parse_anchors,
)


# --------------------------------------------------------------------- count
@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.argument("query")
@_search_options
@_graph_options
@_json_option
@_debug_option
def count(graph: str, query: str, mode: str, induced: bool, backend: str,
          anchors: tuple[str, ...], order: str, fmt: str | None, directed: bool,
          vertex_labels: str | None, as_json: bool) -> None:
    """Count the embeddings (or subgraphs) of QUERY in GRAPH.

    Counting never materialises matches. The printed line says what was
    counted, e.g. "triangle: 1,234 embeddings (non-induced)".

    \b
    Examples:
      warpmatch count web.txt triangle
      warpmatch count web.txt 4-clique --mode subgraphs --json
      warpmatch count yeast.graph "a:3-b:5, b-c, c-a" --induced
      warpmatch count votes.txt "a->b, b->c, c->a" --directed
      warpmatch count web.txt "a-b, b-c, c-d, d-a" --anchor a=1,2,3 --anchor c=@ids.txt
      warpmatch count web.txt square --anchor 0=7      (named patterns: vertices 0..k-1)
    """
    from .._progress import ProgressBar
    from ..api import as_query, count_result

    anchor_map = parse_anchors(anchors)
    g, load_s = _load_graph(graph, fmt, directed, vertex_labels)
    q = as_query(query, g)
    with ProgressBar(q.name) as bar:
        res = count_result(g, q, mode=mode, induced=induced, backend=backend,
                           anchors=anchor_map or None, order=order,
                           # engines split work into chunks only when watched
                           progress=bar if bar.enabled else None)
    click.echo(res.describe())
    anchored = "".join(f", {v} anchored to {n:,} ids" for v, n in res.as_dict()["anchors"].items())
    click.echo(f"  in {_graph_line(g)}{anchored}; backend {res.backend}, "
               f"{res.seconds:.3f} s"
               + (f" (planner: {res.plan.empty_reason})" if res.plan.empty_reason else ""))
    if as_json:
        d = res.as_dict()
        d.update(graph=graph, graph_name=g.name, load_seconds=round(load_s, 6))
        _emit_json(d)


# --------------------------------------------------------------------- match
@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.argument("query")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Output file: .parquet, .csv or .npy (one column per query vertex).")
@click.option("--limit", type=click.IntRange(min=0), default=None,
              help="Stop after N matches (default: all).")
@click.option("--batch-size", type=click.IntRange(min=1), default=65536, show_default=True,
              help="Matches per batch held in memory.")
@click.option("--output-format", type=click.Choice(["parquet", "csv", "npy"]), default=None,
              help="Override the format implied by the extension.")
@_search_options
@_graph_options
@_json_option
@_debug_option
def match(graph: str, query: str, output: str, limit: int | None, batch_size: int,
          output_format: str | None, mode: str, induced: bool, backend: str,
          anchors: tuple[str, ...], order: str, fmt: str | None, directed: bool,
          vertex_labels: str | None, as_json: bool) -> None:
    """List the matches of QUERY in GRAPH into a file.

    Columns are named by the query's vertex names and hold data vertex ids in
    the graph file's id space. Matches stream to the file in batches (memory
    stays bounded); the file appears only when complete (written to a
    temporary file, then renamed).

    \b
    Examples:
      warpmatch match web.txt triangle -o triangles.parquet
      warpmatch match web.txt "a-b, b-c, c-d, d-a" -o squares.csv --mode subgraphs
      warpmatch match web.txt 4-clique -o first.npy --limit 1000
      warpmatch match web.txt "a-b, b-c, c-a" -o t.parquet --anchor a=@accounts.txt
    """
    from .._progress import ProgressBar
    from .._writers import atomic_path, open_match_writer
    from .._writers import output_format as out_fmt
    from ..api import as_query, describe_count
    from ..api import match as api_match
    from ..engine import resolve_backend

    ofmt = out_fmt(output, output_format)
    anchor_map = parse_anchors(anchors)
    g, load_s = _load_graph(graph, fmt, directed, vertex_labels)
    q = as_query(query, g)
    engine_name = resolve_backend(backend).name
    t0 = time.perf_counter()
    batches = api_match(g, q, mode=mode, induced=induced, backend=backend,
                        anchors=anchor_map or None, limit=limit, batch_size=batch_size,
                        order=order)
    with atomic_path(output) as tmp:
        writer = open_match_writer(tmp, q.names, ofmt)
        try:
            with ProgressBar(q.name, unit="rows", total=limit) as bar:
                for batch in batches:
                    writer.write(batch)
                    bar.update(len(batch))
        finally:
            writer.close()
    seconds = time.perf_counter() - t0
    rows = writer.rows
    limit_reached = limit is not None and rows >= limit
    click.echo(f"{describe_count(rows, mode, induced, q.name)} written to {output}"
               + (f" (stopped at --limit {limit:,})" if limit_reached else ""))
    click.echo(f"  in {_graph_line(g)}; backend {engine_name}, {seconds:.3f} s; "
               f"columns {', '.join(q.names)}")
    if as_json:
        _emit_json({
            "count": rows, "mode": mode, "induced": induced, "backend": engine_name,
            "seconds": round(seconds, 6), "load_seconds": round(load_s, 6),
            "graph": graph, "graph_name": g.name, "query": q.name, "query_dsl": q.to_dsl(),
            "output": output, "format": ofmt, "columns": list(q.names),
            "limit": limit, "limit_reached": limit_reached,
            "anchors": {k: len(v) for k, v in anchor_map.items()},
            "semantics": describe_count(rows, mode, induced, q.name),
        })


# ------------------------------------------------------------------- explain
@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.argument("query")
@click.option("--purpose", type=click.Choice(["count", "list"]), default="count",
              show_default=True, help="Explain the counting plan or the listing plan.")
@_search_options
@_graph_options
@_debug_option
def explain(graph: str, query: str, purpose: str, mode: str, induced: bool, backend: str,
            anchors: tuple[str, ...], order: str, fmt: str | None, directed: bool,
            vertex_labels: str | None) -> None:
    """Show how QUERY would be searched in GRAPH (nothing is counted).

    Prints the query, the candidate filters (labels, degrees, neighbour-label
    frequencies, anchors), the matching order with each step's backward
    neighbours, the symmetry-breaking restrictions and induced checks.

    \b
    Examples:
      warpmatch explain web.txt house
      warpmatch explain yeast.graph query.graph --mode subgraphs --induced
    """
    from ..api import explain as api_explain
    anchor_map = parse_anchors(anchors)
    g, _ = _load_graph(graph, fmt, directed, vertex_labels)
    click.echo(api_explain(g, query, mode=mode, induced=induced, backend=backend,
                           anchors=anchor_map or None, order=order, purpose=purpose))


