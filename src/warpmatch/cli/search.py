"""``count``, ``match``, ``explain``: searching a graph for a query."""
from __future__ import annotations

import time
from typing import Any

import click

from ._cluster import cluster_client, cluster_options
from ._common import (
    CONTEXT_SETTINGS,
    _debug_option,
    _emit_json,
    _graph_line,
    _graph_options,
    _json_option,
    _search_options,
    _threads_option,
    cli,
    parse_anchors,
    running,
)
from .partition import load_source, partition_line, partition_options


_vertex_order_option = click.option(
    "--vertex-order", "vertex_order", type=click.Choice(["auto", "degree", "given"]),
    default="auto", show_default=True,
    help="Search a copy of the graph whose ids ascend by degree (degree), the graph's "
         "own ids (given), or by degree for queries with at least three automorphisms "
         "(auto). Only symmetry restrictions compare ids: the answer is the same, the "
         "search is not (triangle to 5-clique and the square: 1.4-3.9x faster by degree on a "
         "10^7-edge power-law graph, H200).")


# --------------------------------------------------------------------- count
@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.argument("queries", metavar="QUERY...", nargs=-1, required=True)
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop each query's count once at least N matches are found; the count "
                   "printed is then a lower bound, and says so (\"at least\", \"partial\").")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS",
              help="Stop each query's search after SECONDS; a partial count says so.")
@_vertex_order_option
@_threads_option
@cluster_options
@partition_options
@_search_options
@_graph_options
@_json_option
@_debug_option
def count(graph: str, queries: tuple[str, ...], limit: int | None, time_limit: float | None,
          vertex_order: str, threads: int | None, workers: int | None,
          scheduler: str | None, partitions: Any, memory_budget: int | None, mode: str,
          induced: bool, backend: str,
          anchors: tuple[str, ...], order: str, fmt: str | None, directed: bool,
          vertex_labels: str | None, as_json: bool) -> None:
    """Count the embeddings (or subgraphs) of each QUERY in GRAPH.

    Counting never materialises matches. The printed line says what was
    counted, e.g. "triangle: 1,234 embeddings (non-induced)"; several queries
    are counted one after the other (the graph is read once), one result line
    each, and with --json each query's JSON object follows its lines (one
    query: the last line of stdout). A count stopped by --limit or
    --time-limit reads "triangle: at least 1,234 embeddings (non-induced;
    partial: time limit 5 s reached)" and has "partial": true in its JSON.

    \b
    Examples:
      warpmatch count web.txt triangle
      warpmatch count web.txt triangle square house     (one line per query)
      warpmatch count web.txt 4-clique --mode subgraphs --json
      warpmatch count web.txt 5-clique --time-limit 10 --threads 4
      warpmatch count yeast.graph "a:3-b:5, b-c, c-a" --induced
      warpmatch count votes.txt "a->b, b->c, c->a" --directed
      warpmatch count web.txt "a-b, b-c, c-d, d-a" --anchor a=1,2,3 --anchor c=@ids.txt
      warpmatch count web.txt square --anchor 0=7      (named patterns: vertices 0..k-1)
      warpmatch count web.wmg 4-clique --workers 4      (a local Dask cluster)
      warpmatch count web.wmg house --scheduler tcp://10.0.0.5:8786
      warpmatch count web.wmg square --partitions 8     (by parts: graphs beyond GPU memory)
      warpmatch count web.parts square --backend gpu    (parts made by warpmatch partition)

    With --partitions, or a graph too large for --memory-budget on the GPU,
    each part is matched alone and then the matches that cross parts (PBE);
    --json adds "partition" (parts, cut, intra-partition share, seconds,
    bytes moved to the device).

    With --workers or --scheduler the search is cut into shards run by Dask
    workers (each runs the best engine it has; --backend names it there), the
    progress bar counts shards, and --json adds "distributed" (workers, shards,
    each worker's seconds). A .wmg graph is memory-mapped by each worker.
    """
    from .._progress import ProgressBar
    from ..api import as_query, count_result

    anchor_map = parse_anchors(anchors)
    g, load_s, pg = load_source(graph, fmt, directed, vertex_labels)
    if pg is not None and partitions is None:
        partitions = pg
    qs = [as_query(query, g) for query in queries]     # every query checked before any count
    # (a .wmg graph is memory-mapped: the workers map its file instead of receiving it)
    with running(threads), cluster_client(workers, scheduler) as client:
        for q in qs:
            with ProgressBar(q.name, percent=True) as bar:
                res = count_result(g, q, mode=mode,
                                   induced=induced, backend=backend,
                                   anchors=anchor_map or None, order=order,
                                   progress=bar if bar.enabled else None,
                                   limit=limit, time_limit=time_limit, client=client,
                                   partitions=partitions, memory_budget=memory_budget,
                                   vertex_order=vertex_order)
            click.echo(res.describe())
            anchored = "".join(f", {v} anchored to {n:,} ids"
                               for v, n in res.as_dict()["anchors"].items())
            click.echo(f"  in {_graph_line(g)}{anchored}; backend {res.backend}, "
                       f"{res.seconds:.3f} s"
                       + (f" (of which {res.compile_seconds:.3f} s compiling kernels)"
                          if res.compile_seconds >= 0.0005 else "")
                       # the generic module: no compilation for this query, slower search
                       # ($WARPMATCH_GPU_COMPILE, engine/gpu/modules.py)
                       + (" (generic kernels)" if res.gpu_module == "generic" else "")
                       # one-time engine set-up, apart so the count's seconds compare across
                       # inputs
                       + (f" (+{res.warmup_seconds:.3f} s one-time warm-up)"
                          if res.warmup_seconds >= 0.0005 else "")
                       + (f" (planner: {res.plan.empty_reason})"
                          if res.plan.empty_reason else "")
                       + (f"; {res.distributed['workers']} workers, "
                          f"{res.distributed['shards']} shards"
                          if res.distributed and "workers" in res.distributed else "")
                       + ("; ids by degree" if res.vertex_order == "degree" else "")
                       + (_raced_note(res) if res.raced else "")
                       + (f"; factored at {res.factored['cut']} ({len(res.factored['groups'])}"
                          f" groups, {res.factored['roots']:,} roots)"
                          if getattr(res, "factored", None) else "")
                       + (_hombasis_note(res.hombasis)
                          if getattr(res, "hombasis", None) else "")
                       + (f"; from {res.cliques['cliques']:,} data cliques"
                          if getattr(res, "cliques", None) else ""))
            if res.partition is not None:
                click.echo(partition_line(res.partition))
            if as_json:
                d = res.as_dict()
                d.update(graph=graph, graph_name=g.name, load_seconds=round(load_s, 6))
                _emit_json(d)


# --------------------------------------------------------------------- match
@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.argument("query")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="Output file: .parquet, .csv or .npy (one column per query vertex); "
                   "'-' streams CSV to stdout (the summary then goes to stderr). Symlinks "
                   "are written through; /dev/null or a FIFO is written into directly.")
@click.option("--limit", type=click.IntRange(min=0), default=None,
              help="Stop after N matches (default: all).")
@click.option("--batch-size", type=click.IntRange(min=1), default=65536, show_default=True,
              help="Matches per batch held in memory.")
@click.option("--output-format", type=click.Choice(["parquet", "csv", "npy"]), default=None,
              help="Override the format implied by the extension.")
@_threads_option
@cluster_options
@partition_options
@_search_options
@_graph_options
@_json_option
@_debug_option
def match(graph: str, query: str, output: str, limit: int | None, batch_size: int,
          output_format: str | None, threads: int | None, workers: int | None,
          scheduler: str | None, partitions: Any, memory_budget: int | None, mode: str,
          induced: bool, backend: str, anchors: tuple[str, ...], order: str, fmt: str | None,
          directed: bool, vertex_labels: str | None, as_json: bool) -> None:
    """List the matches of QUERY in GRAPH into a file.

    Columns are named by the query's vertex names and hold data vertex ids in
    the graph file's id space. Matches stream to the file in batches (memory
    stays bounded); the file appears only when complete (written to a
    temporary file, then renamed; an existing file keeps its permissions, a
    new one gets the umask's). With -o - the CSV rows stream to stdout as
    they are found.

    \b
    Examples:
      warpmatch match web.txt triangle -o triangles.parquet
      warpmatch match web.txt "a-b, b-c, c-d, d-a" -o squares.csv --mode subgraphs
      warpmatch match web.txt 4-clique -o first.npy --limit 1000
      warpmatch match web.txt "a-b, b-c, c-a" -o t.parquet --anchor a=@accounts.txt
      warpmatch match web.txt triangle -o - --limit 10 | sort -n
      warpmatch match web.wmg house -o houses/ --workers 4     (a Parquet dataset)

    With --workers or --scheduler, OUTPUT is a new directory: a Parquet
    dataset with one part-NNNNN.parquet per shard, each written by a worker
    (atomically: a shard run again after its worker died replaces its file);
    the directory appears when every shard is written. The workers must see
    the directory (a local cluster does). With partitions too (--partitions,
    or a partition directory as GRAPH), every part's and inter-partition
    search's shards are written (part-SSS-NNNNN.parquet).
    """
    if workers is not None or scheduler is not None:
        _match_dataset(graph, query, output, limit, batch_size, output_format, threads,
                       workers, scheduler, partitions, mode, induced, backend, anchors, order,
                       fmt, directed, vertex_labels, as_json)
        return
    from .._progress import ProgressBar
    from .._writers import open_match_writer
    from .._writers import output_format as out_fmt
    from ..api import as_query, describe_count
    from ..api import match as api_match
    from ..engine import resolve_backend
    from ._output import check_output_target, output_sink

    ofmt = out_fmt(output, output_format)
    # stdout carries the rows: the summary goes to stderr
    to_stdout = check_output_target(output, ofmt, as_json)
    anchor_map = parse_anchors(anchors)
    g, load_s, pg = load_source(graph, fmt, directed, vertex_labels)
    if pg is not None and partitions is None:
        partitions = pg
    q = as_query(query, g)
    engine_name = resolve_backend(backend).name
    click.get_current_context().with_resource(running(threads))   # until the command ends
    # the bar shows the search's progress (rows can be rare), the rows written after it
    bar = ProgressBar(q.name, percent=True)
    t0 = time.perf_counter()
    batches = api_match(g, q, mode=mode, induced=induced, backend=backend,
                        anchors=anchor_map or None, limit=limit, batch_size=batch_size,
                        order=order, progress=bar if bar.enabled else None,
                        partitions=partitions, memory_budget=memory_budget)
    with output_sink(output) as sink:
        writer = open_match_writer(sink, q.names, ofmt)
        try:
            with bar:
                for batch in batches:
                    writer.write(batch)
                    bar.note(f"{writer.rows:,} rows")
        finally:
            writer.close()
    seconds = time.perf_counter() - t0
    rows = writer.rows
    limit_reached = limit is not None and rows >= limit
    where = "stdout" if output == "-" else output
    click.echo(f"{describe_count(rows, mode, induced, q.name)} written to {where}"
               + (f" (stopped at --limit {limit:,})" if limit_reached else ""), err=to_stdout)
    click.echo(f"  in {_graph_line(g)}; backend {engine_name}, {seconds:.3f} s; "
               f"columns {', '.join(q.names)}", err=to_stdout)
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


def _match_dataset(graph: str, query: str, output: str, limit: int | None, batch_size: int,
                   output_format: str | None, threads: int | None, workers: int | None,
                   scheduler: str | None, partitions: Any, mode: str, induced: bool,
                   backend: str, anchors: tuple[str, ...], order: str, fmt: str | None,
                   directed: bool, vertex_labels: str | None, as_json: bool) -> None:
    """``match`` on a Dask cluster: a Parquet dataset written by the workers (by
    partitions: :func:`warpmatch.distributed.partitioned.write_partitioned`)."""
    from .._progress import ProgressBar
    from .._strategies import partition as choose_partition
    from ..api import _plan, as_query, describe_count
    from ..distributed import prepare, write_dataset
    from ..distributed.partitioned import write_partitioned

    if limit is not None:
        raise click.UsageError("--limit is not available with --workers/--scheduler: every "
                               "shard writes all its rows (list without them to stop early)")
    if output == "-" or (output_format not in (None, "parquet")) or \
            output.lower().endswith((".csv", ".npy")):
        raise click.UsageError("with --workers/--scheduler the output is a Parquet dataset: "
                               "give a directory for -o, not '-' or a .csv/.npy file")
    anchor_map = parse_anchors(anchors)
    g, load_s, pg = load_source(graph, fmt, directed, vertex_labels)
    q = as_query(query, g)
    plan = _plan(g, q, mode, bool(induced), anchor_map or None, order, purpose="list")
    if partitions is not None and plan.empty_reason is None:
        pg = choose_partition(pg, g, None, partitions, None)
    t0 = time.perf_counter()
    with running(threads), cluster_client(workers, scheduler) as client:
        with ProgressBar(q.name, percent=True) as bar:
            cb = bar if bar.enabled else None
            try:
                if pg is not None and plan.empty_reason is None:
                    rows, stats = write_partitioned(client, pg, plan, output, q.names,
                                                    anchor_map or None, backend, batch_size,
                                                    cb)
                else:
                    job = prepare(client, g, plan, backend=backend)
                    try:
                        rows = write_dataset(job, output, q.names, batch_size=batch_size,
                                             progress=cb)
                    finally:
                        job.close()
                    stats = job.stats
            except (FileExistsError, FileNotFoundError) as exc:
                raise click.ClickException(str(exc)) from None
    seconds = time.perf_counter() - t0
    by_parts = (f", {stats['searches']} searches of {pg.parts} parts"
                if pg is not None and "searches" in stats else "")
    click.echo(f"{describe_count(rows, mode, induced, q.name)} written to {output} "
               f"(Parquet dataset, {max(1, stats['shards'])} files)")
    click.echo(f"  in {_graph_line(g)}; {stats['workers']} Dask workers, "
               f"{stats['shards']} shards{by_parts}, {seconds:.3f} s; columns "
               f"{', '.join(q.names)}")
    if as_json:
        _emit_json({
            "count": rows, "mode": mode, "induced": induced, "backend": "dask:" + backend,
            "seconds": round(seconds, 6), "load_seconds": round(load_s, 6),
            "graph": graph, "graph_name": g.name, "query": q.name, "query_dsl": q.to_dsl(),
            "output": output, "format": "parquet-dataset", "columns": list(q.names),
            "limit": None, "limit_reached": False,
            "anchors": {k: len(v) for k, v in anchor_map.items()},
            "distributed": stats,
            "semantics": describe_count(rows, mode, induced, q.name),
        })


# ------------------------------------------------------------------- explain
@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.argument("query")
@click.option("--purpose", type=click.Choice(["count", "list"]), default="count",
              show_default=True, help="Explain the counting plan or the listing plan.")
@_vertex_order_option
@cluster_options
@partition_options
@_search_options
@_graph_options
@_debug_option
def explain(graph: str, query: str, purpose: str, vertex_order: str, workers: int | None,
            scheduler: str | None, partitions: Any, memory_budget: int | None, mode: str,
            induced: bool, backend: str, anchors: tuple[str, ...], order: str,
            fmt: str | None, directed: bool, vertex_labels: str | None) -> None:
    """Show how QUERY would be searched in GRAPH (nothing is counted).

    Prints the query, the candidate filters (labels, degrees, neighbour-label
    frequencies, anchors), the matching order with each step's backward
    neighbours, the symmetry-breaking restrictions and induced checks.

    \b
    Examples:
      warpmatch explain web.txt house
      warpmatch explain yeast.graph query.graph --mode subgraphs --induced
      warpmatch explain web.wmg house --scheduler tcp://10.0.0.5:8786  (+ the shards)
      warpmatch explain web.parts house     (+ the parts and the inter-partition searches)
    """
    from ..api import explain as api_explain
    anchor_map = parse_anchors(anchors)
    g, _, pg = load_source(graph, fmt, directed, vertex_labels)
    if pg is not None and partitions is None:
        partitions = pg
    with cluster_client(workers, scheduler) as client:
        click.echo(api_explain(g, query, mode=mode, induced=induced, backend=backend,
                               anchors=anchor_map or None, order=order, purpose=purpose,
                               client=client, partitions=partitions,
                               memory_budget=memory_budget, vertex_order=vertex_order))


def _hombasis_note(info: dict) -> str:
    """The summary's words for a count summed over quotients (twins merged: fewer
    quotients than partitions)."""
    parts = info.get("partitions")
    merged = (f" ({parts:,} partitions, twins merged)"
              if parts is not None and parts != info["quotients"] else "")
    return f"; from the homomorphisms of {info['quotients']:,} quotients{merged}"


def _raced_note(res: Any) -> str:
    """The summary line's note on an order race (:mod:`warpmatch.engine.race`): which order
    answered, or which was ahead when a time limit stopped both."""
    name = "ri" if res.plan.order_name == "auto" else res.plan.order_name
    on = f" on the {res.raced_on} engine" if getattr(res, "raced_on", None) else ""
    if res.partial and not res.partial.startswith("limit"):
        return f"; orders raced ({name}{on} ahead)"
    return f"; orders raced, {name} answered{on}"
