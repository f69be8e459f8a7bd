"""``show``, ``plot-stream``: pictures of matches and of a stream's counts.

Both are thin layers over :mod:`warpmatch.viz` (:func:`~warpmatch.viz.save_matches`,
:func:`~warpmatch.viz.to_dot`, :func:`~warpmatch.viz.plot_stream`). DOT output
needs nothing installed; PNG/SVG/PDF need matplotlib (``pip install
'warpmatch[viz]'``), and asking for them without it is a one-line error.
"""
from __future__ import annotations

import click

from ._common import (
    BACKENDS,
    CONTEXT_SETTINGS,
    _debug_option,
    _emit_json,
    _graph_line,
    _graph_options,
    _json_option,
    _load_graph,
    cli,
    parse_anchors,
)


# ---------------------------------------------------------------------- show
@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.argument("query")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Picture file: .png, .svg or .pdf (matplotlib), .dot or .gv (Graphviz "
                   "text). Default: DOT text on stdout.")
@click.option("--limit", type=click.IntRange(min=0), default=3, show_default=True,
              help="Draw the first N matches.")
@click.option("--hops", type=click.IntRange(min=0), default=1, show_default=True,
              help="Also draw the data vertices up to H edges away from a match.")
@click.option("--max-vertices", type=click.IntRange(min=1), default=60, show_default=True,
              help="Stop adding neighbourhood vertices at this many drawn vertices "
                   "(match vertices are always drawn).")
@click.option("--mode", type=click.Choice(["subgraphs", "embeddings"]), default="subgraphs",
              show_default=True,
              help="subgraphs: each distinct match once; embeddings: also its automorphic "
                   "copies.")
@click.option("--induced", is_flag=True,
              help="Induced: non-adjacent query vertices map to non-adjacent data vertices.")
@click.option("--backend", type=click.Choice(BACKENDS), default="auto", show_default=True,
              help="Engine that finds the matches.")
@click.option("--anchor", "anchors", multiple=True, metavar="V=IDS",
              help="Restrict query vertex V to data vertices IDS ('a=1,2,3' or 'a=@ids.txt'). "
                   "Repeatable.")
@_graph_options
@_json_option
@_debug_option
def show(graph: str, query: str, output: str | None, limit: int, hops: int,
         max_vertices: int, mode: str, induced: bool, backend: str,
         anchors: tuple[str, ...], fmt: str | None, directed: bool,
         vertex_labels: str | None, as_json: bool) -> None:
    """Draw the first matches of QUERY in GRAPH with their neighbourhood.

    Match vertices are filled with their match's colour and labelled with
    the data vertex id and the query vertex they play; the edges a match
    uses are thick, in its colour; the rest of the H-hop neighbourhood is
    grey. Without -o the picture is DOT text on stdout (for Graphviz), and
    the summary goes to stderr.

    \b
    Examples:
      warpmatch show web.txt triangle -o triangles.png
      warpmatch show web.txt "a-b, b-c, c-d, d-a" -o squares.svg --limit 5 --hops 2
      warpmatch show web.txt house | dot -Tpdf > house.pdf
      warpmatch show yeast.graph query.graph -o q.dot --anchor 0=@ids.txt
    """
    from ..api import as_query
    from ..viz import _matplotlib, _picture_format, match_drawing, save_matches, to_dot

    if as_json and output is None:
        raise click.UsageError("--json needs -o: without it, stdout holds the DOT text")
    if output is not None and _picture_format(output) != "dot":
        _matplotlib()                       # a missing extra fails before the search
    anchor_map = parse_anchors(anchors)
    g, _ = _load_graph(graph, fmt, directed, vertex_labels)
    q = as_query(query, g)
    options = dict(limit=limit, hops=hops, max_vertices=max_vertices, mode=mode,
                   induced=induced, backend=backend, anchors=anchor_map or None)
    if output is None:
        d = match_drawing(g, q, **options)
        click.echo(to_dot(d), nl=False)
    else:
        d = save_matches(g, q, output, **options)
    drawn = len(d.matches)
    lines = [(f"wrote {output}: " if output else "") + d.note,
             f"  {d.ids.size:,} vertices, {len(d.edges):,} edges drawn from {_graph_line(g)}"]
    if drawn == 0:
        lines.append("  no match: the picture shows no vertex")
    for line in lines:
        click.echo(line, err=output is None)
    if as_json:
        _emit_json({"matches": drawn, "vertices": int(d.ids.size), "edges": len(d.edges),
                    "capped": d.capped, "mode": mode, "induced": induced, "hops": hops,
                    "query": q.name, "graph": graph, "output": output, "note": d.note})


# --------------------------------------------------------------- plot-stream
@cli.command("plot-stream", context_settings=CONTEXT_SETTINGS)
@click.argument("deltas", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Image file: .png, .svg or .pdf.")
@click.option("--initial", type=int, default=0, show_default=True,
              help="The count before the stream (initial_count of 'stream --json'); "
                   "0 plots the net change.")
@click.option("--x", "x_axis", type=click.Choice(["auto", "update", "time"]), default="auto",
              show_default=True,
              help="Horizontal axis: the update index, or the timestamp (auto: the time "
                   "where the stream has one).")
@_json_option
@_debug_option
def plot_stream(deltas: str, output: str, initial: int, x_axis: str, as_json: bool) -> None:
    """Plot the running count of a stream and its per-update +/- from DELTAS.

    DELTAS is a file written by 'warpmatch stream -o' (.parquet, .jsonl or
    .csv): with --counts-only one row per update, otherwise one row per
    match that appeared or disappeared (summed per update). Needs matplotlib
    (pip install 'warpmatch[viz]').

    \b
    Examples:
      warpmatch stream g0.wmg triangle ups.txt --counts-only -o deltas.parquet --json
      warpmatch plot-stream deltas.parquet -o counts.png --initial 1234
      warpmatch plot-stream deltas.csv -o counts.svg --x update
    """
    from ..viz import _matplotlib, read_stream_counts
    from ..viz import plot_stream as api_plot_stream

    _matplotlib()
    c = read_stream_counts(deltas)
    api_plot_stream(c, output, initial=initial, x=x_axis, title=None)
    added, removed = int(c.plus.sum()), int(c.minus.sum())
    what = "updates" if c.every_update else "updates that changed a match"
    click.echo(f"plotted {c.update.size:,} {what} of {deltas} to {output}: +{added:,} "
               f"appeared, -{removed:,} disappeared, count {initial:,} -> "
               f"{initial + added - removed:,}")
    if as_json:
        _emit_json({"updates": int(c.update.size), "added": added, "removed": removed,
                    "initial": initial, "final": initial + added - removed,
                    "output": output, "deltas": deltas})
