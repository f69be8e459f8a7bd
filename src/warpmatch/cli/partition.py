"""``partition``, and the ``--partitions`` / ``--memory-budget`` options of the search commands.

Map: :func:`partition_options` (the two options) < :func:`load_source` (a graph
file, or a partition directory where a graph is expected) < :func:`partition`
(the command: cut a graph once, write the parts for later runs).
Over :mod:`warpmatch.partition` (PBE).
"""
from __future__ import annotations

import time
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


def _parts_value(value: str | None) -> Any:
    """``--partitions``: a part count, or a partition directory."""
    if value is None:
        return None
    try:
        n = int(value)
    except ValueError:
        from ..partition import is_partition_dir
        if is_partition_dir(value):
            return value
        raise click.BadParameter(f"{value!r} is neither a part count nor a partition "
                                 "directory (warpmatch partition GRAPH -o DIR)") from None
    if n < 1:
        raise click.BadParameter(f"a part count must be at least 1, not {n}")
    return n


def _budget_value(value: str | None) -> int | None:
    if value is None:
        return None
    from ..partition import parse_bytes
    try:
        return parse_bytes(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def partition_options(f: Callable) -> Callable:
    """``--partitions P|DIR`` and ``--memory-budget SIZE``."""
    f = click.option("--memory-budget", "memory_budget", default=None, metavar="SIZE",
                     callback=lambda c, p, v: _budget_value(v),
                     help="GPU memory the search may use (e.g. 4GB, 512MiB); a graph that "
                          "does not fit is matched by partitions. Default: the device's "
                          "free memory less working room.")(f)
    f = click.option("--partitions", "partitions", default=None, metavar="P|DIR",
                     callback=lambda c, p, v: _parts_value(v),
                     help="Match by P METIS partitions (any backend), or reuse the "
                          "partitions in DIR (warpmatch partition). Each part is matched "
                          "alone, then the matches that cross parts; the answer is the "
                          "in-memory one.")(f)
    return f


def load_source(path: str, fmt: str | None, directed: bool,
                vertex_labels: str | None) -> tuple[Any, float, Any]:
    """``(graph, load seconds, Partitioned or None)``: GRAPH may be a partition directory."""
    from ..partition import Partitioned, is_partition_dir
    if is_partition_dir(path):
        t0 = time.perf_counter()
        pg = Partitioned.open(path)
        return pg.graph, time.perf_counter() - t0, pg
    g, load_s = _load_graph(path, fmt, directed, vertex_labels)
    return g, load_s, None


def partition_line(d: dict) -> str:
    """The summary line of a partitioned run (``--json``'s ``"partition"``; on a cluster
    it holds no per-stage seconds, engines or bytes)."""
    if d.get("strategy", "partitioned") != "partitioned":      # whole_graph_memory
        return (f"  {d['strategy']}: {d['parts']} parts ({d['method']}) would cut "
                f"{d['cut_edges']:,} edges ({d['cut_share']:.1%}), so the whole graph was "
                f"searched on {d['engine']} ({d['seconds']:.3f} s); "
                f"{d['bytes_to_device']:,} bytes moved to the device")
    line = (f"  partitioned: {d['parts']} parts ({d['method']}), {d['cut_edges']:,} cut "
            f"edges; {d['intra_share']:.1%} of the matches inside one part")
    if "intra_seconds" in d:
        line += (f" ({d['intra_seconds']:.3f} s on {d['intra_engine']}), the rest by "
                 f"{d['inter_searches']} inter-partition searches ({d['inter_seconds']:.3f} s "
                 f"on {d['inter_engine']}); {d['bytes_to_device']:,} bytes moved to the "
                 "device")
    return line


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
              help="The directory to create (it must not exist).")
@click.option("--parts", type=click.IntRange(min=1), default=None, metavar="P",
              help="Number of parts (with --memory-budget: the count to start from).")
@click.option("--memory-budget", "memory_budget", default=None, metavar="SIZE",
              callback=lambda c, p, v: _budget_value(v),
              help="Make as many parts as needed for each to fit SIZE of GPU memory "
                   "(less a quarter kept for intermediate results).")
@click.option("--method", type=click.Choice(["auto", "metis", "bfs"]), default="auto",
              show_default=True,
              help="METIS k-way (pymetis, the [partition] extra) or ranges of a BFS order; "
                   "auto uses METIS when installed.")
@click.option("--seed", type=int, default=0, show_default=True, help="METIS's random seed.")
@_graph_options
@_json_option
@_debug_option
def partition(graph: str, output: str, parts: int | None, memory_budget: int | None,
              method: str, seed: int, fmt: str | None, directed: bool,
              vertex_labels: str | None, as_json: bool) -> None:
    """Cut GRAPH into parts once and write them to a directory for later runs.

    The directory holds the whole graph, each part's induced subgraph (both in
    warpmatch's binary format, memory-mapped when read) and the cut's
    metadata. Give it where a graph is expected (warpmatch count DIR QUERY) or
    to --partitions; a run then matches each part alone (on the GPU: one part
    in memory at a time) and the matches that cross parts, exactly.

    \b
    Examples:
      warpmatch partition web.txt --parts 8 -o web.parts
      warpmatch partition web.wmg --memory-budget 4GB -o web.parts
      warpmatch count web.parts triangle square --backend gpu
    """
    from .._progress import ProgressBar
    from ..partition import Partitioned

    if parts is None and memory_budget is None:
        raise click.UsageError("give --parts P, --memory-budget SIZE, or both")
    g, load_s = _load_graph(graph, fmt, directed, vertex_labels)
    t0 = time.perf_counter()
    with ProgressBar("cutting", percent=True) as bar:
        pg = Partitioned.build(g, parts=parts, budget=memory_budget, method=method, seed=seed,
                               progress=bar if bar.enabled else None)
    cut_s = time.perf_counter() - t0
    with ProgressBar("writing parts", percent=True) as bar:
        pg.write(output, progress=bar if bar.enabled else None)
    write_s = time.perf_counter() - t0 - cut_s
    byts = pg.part_bytes()
    click.echo(f"{pg.parts} parts ({pg.method}) of {_graph_line(g)} written to {output}")
    click.echo(f"  {pg.cut_edges:,} cut edges, {pg.boundary.size:,} boundary vertices; "
               f"part bytes max {int(byts.max()):,}, total {int(byts.sum()):,}; "
               f"cut in {cut_s:.3f} s, written in {write_s:.3f} s")
    if as_json:
        _emit_json({"graph": graph, "graph_name": g.name, "output": output,
                    "parts": pg.parts, "method": pg.method, "cut_edges": pg.cut_edges,
                    "boundary_vertices": int(pg.boundary.size),
                    "part_bytes": [int(b) for b in byts], "load_seconds": round(load_s, 6),
                    "partition_seconds": round(cut_s, 6), "write_seconds": round(write_s, 6)})
