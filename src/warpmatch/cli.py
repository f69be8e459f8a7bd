"""The ``warpmatch`` command line (click).

Commands: ``count``, ``match``, ``explain``, ``info``, ``convert``,
``generate``, ``patterns``, ``demo``, ``stream``, ``stream-gen``. Each is a thin layer over
:mod:`warpmatch.api` and the readers/generators in :mod:`warpmatch.graph`:
parse options, call the library, print a result that says its semantics
(``triangle: 1,234 embeddings (non-induced)``) and, with ``--json``, one JSON
object as the last line of stdout.

Conventions (DESIGN.md, "Interfaces users expect"):

- errors a user can cause (:class:`~warpmatch.errors.WarpmatchError`, missing
  files, usage errors) print one line on stderr and exit non-zero, without a
  traceback; ``--debug`` (or ``WARPMATCH_DEBUG=1``) shows it;
- warnings (dropped self-loops, unknown labels) print one line each on stderr;
- progress bars go to stderr, only when stderr is a terminal;
- files are written atomically (temporary file, then rename).
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from ._version import __version__

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
BACKENDS = ("auto", "cpu", "gpu", "reference")
DEMO_PATTERNS = ("triangle", "square", "diamond", "tailed-triangle", "4-clique", "house", "5-cycle")


# ------------------------------------------------------------ error handling
def _debug_requested(args: Sequence[str]) -> bool:
    if os.environ.get("WARPMATCH_DEBUG", "").strip() not in ("", "0"):
        return True
    args = list(args)
    if "--" in args:
        args = args[:args.index("--")]
    return "--debug" in args


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _error_text(exc: BaseException) -> str:
    """The one line shown for an exception a user caused."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.strerror}: {exc.filename}"
    text = str(exc)
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        text = str(exc.args[0])
    return _one_line(text) or type(exc).__name__


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """Print warnings as one ``warpmatch: warning: ...`` line on stderr."""
    click.echo(f"warpmatch: warning: {_one_line(str(message))}", err=True)


class WarpmatchGroup(click.Group):
    """The top-level group; its :meth:`main` is where every error becomes one line.

    Putting the handling here rather than in :func:`main` means tests that
    invoke the group through ``click.testing.CliRunner`` see exactly what a
    user sees.
    """

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        from .errors import InputCleanupWarning, UnknownLabelWarning, WarpmatchError

        args = list(sys.argv[1:] if args is None else args)
        debug = _debug_requested(args)
        code = 0
        with warnings.catch_warnings():
            # users see warpmatch's own warnings (every time: a run is one shot) and
            # other UserWarnings; library noise (Deprecation, Resource) stays hidden
            warnings.simplefilter("ignore")
            warnings.simplefilter("default", UserWarning)
            warnings.simplefilter("always", InputCleanupWarning)
            warnings.simplefilter("always", UnknownLabelWarning)
            warnings.showwarning = _show_warning
            try:
                rv = super().main(args, prog_name or "warpmatch", complete_var,
                                  standalone_mode=False, **extra)
                code = rv if isinstance(rv, int) else 0
            except click.exceptions.Exit as e:   # --help, --version
                code = e.exit_code
            except click.ClickException as e:
                ctx = getattr(e, "ctx", None)
                where = ctx.command_path if ctx is not None else "warpmatch"
                hint = f" (see '{where} --help')" if isinstance(e, click.UsageError) else ""
                click.echo(f"{where}: error: {_one_line(e.format_message())}{hint}", err=True)
                code = e.exit_code
            except (click.Abort, KeyboardInterrupt):
                click.echo("warpmatch: interrupted", err=True)
                code = 130
            except (WarpmatchError, OSError, ValueError, KeyError, TypeError) as e:
                # OSError covers missing/unreadable files; ValueError/KeyError/TypeError
                # come from bad user values that slipped past our own checks
                if debug:
                    traceback.print_exc()
                if isinstance(e, (WarpmatchError, OSError)):
                    click.echo(f"warpmatch: error: {_error_text(e)}", err=True)
                else:
                    click.echo(f"warpmatch: error: {type(e).__name__}: {_error_text(e)}"
                               + ("" if debug else " (run with --debug for the traceback)"),
                               err=True)
                code = 1
            except Exception as e:  # a bug: still one line, traceback on request
                if debug:
                    traceback.print_exc()
                click.echo(f"warpmatch: internal error: {type(e).__name__}: {_error_text(e)}"
                           + ("" if debug else " (run with --debug for the traceback)"),
                           err=True)
                code = 1
        if standalone_mode:
            sys.exit(code)
        return code


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``warpmatch`` console script (and ``python -m warpmatch``)."""
    cli.main(args=argv, prog_name="warpmatch")


# -------------------------------------------------------------- shared bits
def _debug_option(f: Callable) -> Callable:
    # read by WarpmatchGroup.main from the raw arguments; declared so click accepts it anywhere
    return click.option("--debug", is_flag=True, expose_value=False,
                        help="Show the full traceback on errors.")(f)


def _json_option(f: Callable) -> Callable:
    return click.option("--json", "as_json", is_flag=True,
                        help="Also print one JSON object as the last line of stdout.")(f)


def _graph_options(f: Callable) -> Callable:
    f = click.option("--vertex-labels", type=click.Path(dir_okay=False), default=None,
                     help="File with one label per vertex ('id label' lines).")(f)
    f = click.option("--directed", is_flag=True,
                     help="Read the graph as directed (default: undirected).")(f)
    f = click.option("--format", "fmt", default=None, metavar="FORMAT",
                     help="Graph file format (default: from the extension/content): "
                          "edgelist, tve, mtx, csv, parquet, wmg.")(f)
    return f


def _search_options(f: Callable) -> Callable:
    f = click.option("--order", default="ri", show_default=True,
                     help="Matching-order strategy.")(f)
    f = click.option("--anchor", "anchors", multiple=True, metavar="V=IDS",
                     help="Restrict query vertex V to data vertices IDS, given as "
                          "'a=1,2,3' or 'a=@ids.txt' (ids in the graph file's id space; "
                          "V is a DSL name, or 0..k-1 for named patterns). Repeatable.")(f)
    f = click.option("--backend", type=click.Choice(BACKENDS), default="auto",
                     show_default=True,
                     help="Engine: auto picks the GPU if CuPy and a device exist, else cpu.")(f)
    f = click.option("--induced", is_flag=True,
                     help="Induced: non-adjacent query vertices map to non-adjacent data vertices.")(f)
    f = click.option("--mode", type=click.Choice(["embeddings", "subgraphs"]),
                     default="embeddings", show_default=True,
                     help="embeddings: every injective map; subgraphs: each distinct subgraph once.")(f)
    return f


def _load_graph(path: str, fmt: str | None = None, directed: bool = False,
                vertex_labels: str | None = None) -> tuple[Any, float]:
    from .graph import read_graph
    t0 = time.perf_counter()
    g = read_graph(path, format=fmt, directed=directed, vertex_labels=vertex_labels)
    return g, time.perf_counter() - t0


def read_id_file(path: str) -> list[int]:
    """Integer vertex ids from a file: separated by whitespace or commas, ``#`` comments.

    Raises
    ------
    InputFormatError
        Naming ``file:line`` and the offending token.
    """
    from .errors import InputFormatError
    ids: list[int] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            body = line.split("#", 1)[0]
            for tok in body.replace(",", " ").split():
                try:
                    ids.append(int(tok))
                except ValueError:
                    raise InputFormatError(path, lineno, "not an integer vertex id", tok) from None
    if not ids:
        raise InputFormatError(path, None, "no vertex ids in the file")
    return ids


def parse_anchors(specs: Sequence[str]) -> dict[str, list[int]]:
    """``["a=1,2", "b=@ids.txt"]`` -> ``{"a": [1, 2], "b": [...]}``.

    Examples
    --------
    >>> parse_anchors(["a=1,2,3"])
    {'a': [1, 2, 3]}
    """
    from .errors import QueryError
    out: dict[str, list[int]] = {}
    for spec in specs:
        name, sep, rhs = spec.partition("=")
        name, rhs = name.strip(), rhs.strip()
        if not sep or not name or not rhs:
            raise click.BadParameter(f"{spec!r}: expected V=1,2,3 or V=@file",
                                     param_hint="'--anchor'")
        if name in out:
            raise QueryError(f"query vertex {name!r} is anchored twice (--anchor {spec})")
        if rhs.startswith("@"):
            out[name] = read_id_file(rhs[1:])
            continue
        ids = []
        for tok in rhs.split(","):
            tok = tok.strip()
            try:
                ids.append(int(tok))
            except ValueError:
                raise click.BadParameter(f"{spec!r}: {tok!r} is not an integer vertex id",
                                         param_hint="'--anchor'") from None
        out[name] = ids
    return out


def _emit_json(obj: dict[str, Any]) -> None:
    click.echo(json.dumps(obj, default=_json_default))


def _json_default(x: Any) -> Any:
    import numpy as np
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, Path):
        return os.fspath(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def _graph_line(g: Any) -> str:
    kind = "directed" if g.directed else "undirected"
    return f"{g.name} ({g.n:,} vertices, {g.num_edges:,} edges, {kind})"


# --------------------------------------------------------------------- group
HELP = """\
Find every occurrence (embedding) of a small query graph in a large data graph.

\b
Examples:
  warpmatch demo                                   a tour on a generated graph
  warpmatch count graph.txt triangle               count triangle embeddings
  warpmatch count graph.txt "a-b, b-c, c-a" --mode subgraphs
  warpmatch count graph.txt "a-b, b-c, c-a" --anchor a=12,57 --json
  warpmatch count graph.txt square --anchor 0=@accounts.txt
  warpmatch match graph.txt 4-clique -o cliques.parquet --limit 1000
  warpmatch explain graph.txt house
  warpmatch info graph.txt
  warpmatch convert graph.txt graph.wmg            fast binary cache
  warpmatch generate rmat big.wmg --scale 20 --labels 8 --zipf
  warpmatch patterns                               the named patterns
  warpmatch stream g0.wmg triangle updates.txt     matches appearing/disappearing
  warpmatch stream-gen graph.txt --out u.txt --initial g0.wmg

\b
GRAPH: a SNAP edge list (# comments), a t/v/e labeled graph, Matrix Market
(.mtx), a CSV/Parquet edge table, or a .wmg binary cache (warpmatch convert).

\b
QUERY: a named pattern (warpmatch patterns), a query file (t/v/e format), or
DSL text: "a-b, b-c, c-a"; vertex labels "a:3-b:5"; edge labels "a-[7]-b";
directed edges "a->b" (with --directed graphs).

\b
Semantics: 'embeddings' counts every injective map from query to data
vertices (6 per triangle), 'subgraphs' counts each distinct subgraph once
(embeddings / |Aut(Q)|). Non-induced unless --induced. A query label absent
from the graph gives 0 with a warning; a disconnected query is an error.
"""


@click.group(cls=WarpmatchGroup, context_settings=CONTEXT_SETTINGS, help=HELP)
@click.version_option(__version__, "-V", "--version", prog_name="warpmatch",
                      message="%(prog)s %(version)s")
@_debug_option
def cli() -> None:
    """The ``warpmatch`` command group."""


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
    from ._progress import ProgressBar
    from .api import as_query, count_result

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
    from ._progress import ProgressBar
    from ._writers import atomic_path, open_match_writer
    from ._writers import output_format as out_fmt
    from .api import as_query, describe_count
    from .api import match as api_match
    from .engine import resolve_backend

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
    from .api import explain as api_explain
    anchor_map = parse_anchors(anchors)
    g, _ = _load_graph(graph, fmt, directed, vertex_labels)
    click.echo(api_explain(g, query, mode=mode, induced=induced, backend=backend,
                           anchors=anchor_map or None, order=order, purpose=purpose))


# ---------------------------------------------------------------------- info
@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@_graph_options
@_json_option
@_debug_option
def info(graph: str, fmt: str | None, directed: bool, vertex_labels: str | None,
         as_json: bool) -> None:
    """Describe GRAPH: size, degrees, labels, what was dropped while reading.

    \b
    Examples:
      warpmatch info web.txt
      warpmatch info votes.txt --directed --json
    """
    g, load_s = _load_graph(graph, fmt, directed, vertex_labels)
    facts = dict(g.summary())
    rep = g.report
    facts.update(self_loops_dropped=int(rep.self_loops), duplicates_dropped=int(rep.duplicates),
                 load_seconds=round(load_s, 6))
    width = max(len(k) for k in facts)
    for key, val in facts.items():
        shown = f"{val:,}" if isinstance(val, int) and not isinstance(val, bool) else (
            f"{val:.3f}" if isinstance(val, float) else val)
        click.echo(f"{key.replace('_', ' '):<{width}} : {shown}")
    if as_json:
        facts["graph"] = graph
        _emit_json(facts)


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
@_debug_option
def convert(source: str, target: str, from_fmt: str | None, to_fmt: str | None,
            directed: bool, vertex_labels: str | None) -> None:
    """Convert graph SOURCE to TARGET (e.g. an edge list to the fast .wmg binary cache).

    The binary cache loads memory-mapped, near-instantly; use it for graphs
    you query more than once.

    \b
    Examples:
      warpmatch convert web.txt web.wmg
      warpmatch convert yeast.graph yeast.parquet
    """
    from .graph.formats import output_graph_format
    out_fmt = output_graph_format(target, to_fmt)     # fail before reading SOURCE
    g, load_s = _load_graph(source, from_fmt, directed, vertex_labels)
    t0 = time.perf_counter()
    _write_graph_atomic(g, target, out_fmt)
    click.echo(f"wrote {target}: {_graph_line(g)}; read {load_s:.2f} s, "
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
                     help="Zipf-skewed labels (default: uniform).")(f)
    f = click.option("--labels", type=click.IntRange(min=1), default=None,
                     help="Give vertices random labels 0..N-1.")(f)
    f = click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")(f)
    return f


#: output formats that keep vertex labels (edge lists and Matrix Market drop them)
_LABEL_FORMATS = ("binary", "tve", "parquet", "csv")


def _write_graph_atomic(g: Any, target: str, fmt: str) -> None:
    """Write ``g`` to ``target`` atomically; warnings name ``target``, not the temporary file."""
    from ._writers import atomic_path
    from .graph import write_graph
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with atomic_path(target) as tmp:
            write_graph(g, tmp, format=fmt)
    for w in caught:
        warnings.warn(str(w.message).replace(os.fspath(tmp), target), w.category)


def _check_generate_target(out: str, labels: int | None) -> str:
    """OUT's format, checked before generating (a bad name must not cost the generation)."""
    from .graph.formats import output_graph_format
    fmt = output_graph_format(out)
    if labels and fmt not in _LABEL_FORMATS:
        raise click.UsageError(f"--labels needs an output format that keeps vertex labels "
                               f"(.wmg, .graph, .parquet or .csv); {out} would drop them")
    return fmt


def _finish_generated(g: Any, out: str, fmt: str, labels: int | None, zipf: bool, seed: int,
                      t0: float) -> None:
    import dataclasses

    from .graph import random_labels
    if labels:
        vl = random_labels(g.n, labels, "zipf" if zipf else "uniform", seed)
        g = dataclasses.replace(g, vertex_labels=vl)
    _write_graph_atomic(g, out, fmt)
    lab = f", {labels} {'zipf' if zipf else 'uniform'} labels" if labels else ""
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
                  zipf: bool) -> None:
    """A power-law RMAT/Kronecker graph with 2**SCALE vertices, written to OUT.

    OUT's extension picks the format; .wmg (the binary cache) loads fastest.
    Labels need a format that keeps them: .wmg, .graph, .parquet or .csv.

    \b
    Examples:
      warpmatch generate rmat big.wmg --scale 20 --edge-factor 16 --seed 1
      warpmatch generate rmat labeled.wmg --scale 16 --labels 8 --zipf
      warpmatch generate rmat small.txt --scale 10
    """
    from .graph import rmat
    fmt = _check_generate_target(out, labels)
    t0 = time.perf_counter()
    with warnings.catch_warnings():   # RMAT draws duplicates by design; not worth a warning
        warnings.simplefilter("ignore")
        g = rmat(scale, edge_factor, seed=seed)
    _finish_generated(g, out, fmt, labels, zipf, seed, t0)


@generate.command("ba", context_settings=CONTEXT_SETTINGS)
@click.argument("out")
@click.option("--n", "n", type=click.IntRange(min=2), default=100_000, show_default=True,
              help="Number of vertices.")
@click.option("--m", "m", type=click.IntRange(min=1), default=8, show_default=True,
              help="Edges each new vertex attaches.")
@_label_options
@_debug_option
def generate_ba(out: str, n: int, m: int, seed: int, labels: int | None, zipf: bool) -> None:
    """A Barabási–Albert preferential-attachment graph, written to OUT.

    OUT's extension picks the format; .wmg (the binary cache) loads fastest.
    Labels need a format that keeps them: .wmg, .graph, .parquet or .csv.

    \b
    Examples:
      warpmatch generate ba ba.wmg --n 100000 --m 8 --seed 1
      warpmatch generate ba ba.graph --n 20000 --m 5 --labels 16 --zipf
    """
    from .graph import barabasi_albert
    fmt = _check_generate_target(out, labels)
    t0 = time.perf_counter()
    g = barabasi_albert(n, m, seed=seed)
    _finish_generated(g, out, fmt, labels, zipf, seed, t0)


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
    from .query import get_pattern, list_patterns
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


# ---------------------------------------------------------------------- demo
def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[bool]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def fmt(r: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if rt else c.ljust(w) for c, w, rt in zip(r, widths, right))
    lines = [fmt(cells[0]), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in cells[1:]]
    return "\n".join(line.rstrip() for line in lines)


#: the demo's check lists every embedding of a sample with the pure-Python reference engine;
#: these bound its cost (about a second for the default patterns on a laptop CPU)
DEMO_CHECK_VERTICES = 32
DEMO_CHECK_EMBEDDINGS = 20_000


def _demo_check(g: Any, q: Any, backend: str) -> tuple[bool, dict[str, int]]:
    """Check ``backend``'s counts of ``q`` against the reference engine on a part of ``g``.

    The part is the subgraph induced by the vertices ``0..s-1`` (in a
    Barabási–Albert graph the oldest, densest ones, where the demo patterns occur
    unless the graph is too sparse, e.g. a tree with ``--m 1``: then the check
    has nothing to compare and the table says so), ``s`` starting at
    :data:`DEMO_CHECK_VERTICES` and halved until it holds at most
    :data:`DEMO_CHECK_EMBEDDINGS` embeddings. On it, ``backend`` counts embeddings
    and subgraphs as in the table (one symmetry-broken search, times |Aut| for
    embeddings), while the reference
    engine lists every embedding with no symmetry breaking and the distinct
    subgraphs are told apart by their vertex and edge sets. The two sides share
    the planner's filters and order, not the automorphisms, restrictions or
    search code, so the check can fail where ``embeddings = subgraphs x |Aut|``
    (true by construction) cannot.

    Parameters
    ----------
    g : Graph
        The demo graph (undirected, unlabeled).
    q : Query
        The pattern.
    backend : str
        The engine whose counts are checked.

    Returns
    -------
    tuple of (bool, dict)
        Whether both counts agree, and ``{"vertices": s, "embeddings": ...,
        "subgraphs": ...}`` of the reference side.
    """
    from .api import count_result, match
    from .graph.csr import Graph

    src, dst = g.edges()
    s = min(g.n, DEMO_CHECK_VERTICES)
    while True:
        keep = (src < s) & (dst < s)
        part = Graph.from_edges(src[keep], dst[keep], n=s, name=f"{g.name}[:{s}]")
        rows = list(match(part, q, backend="reference", limit=DEMO_CHECK_EMBEDDINGS + 1))
        n_emb = sum(len(b) for b in rows)
        # fewer vertices than the pattern: no embeddings, so this always ends
        if n_emb <= DEMO_CHECK_EMBEDDINGS:
            break
        s //= 2
    qe = q.edges.tolist()
    subgraphs = {(frozenset(r), frozenset(frozenset((r[a], r[b])) for a, b in qe))
                 for b in rows for r in b.tolist()}
    emb = count_result(part, q, mode="embeddings", backend=backend).count
    sub = count_result(part, q, mode="subgraphs", backend=backend).count
    ok = emb == n_emb and sub == len(subgraphs)
    return ok, {"vertices": s, "embeddings": n_emb, "subgraphs": len(subgraphs)}


def _check_word(ok: bool, ref: dict[str, int]) -> str:
    """The demo table's verdict on a sample: a check of zero against zero is no check."""
    if not ok:
        return "MISMATCH"
    return "ok" if ref["embeddings"] else "none in sample"


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.option("--n", "n", type=click.IntRange(min=10), default=20_000, show_default=True,
              help="Vertices of the generated Barabási–Albert graph.")
@click.option("--m", "m", type=click.IntRange(min=1), default=5, show_default=True,
              help="Edges each new vertex attaches.")
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--patterns", "pattern_list", default=",".join(DEMO_PATTERNS), show_default=True,
              help="Comma-separated pattern names.")
@click.option("--backend", type=click.Choice(BACKENDS), default="auto", show_default=True)
@_json_option
@_debug_option
def demo(n: int, m: int, seed: int, pattern_list: str, backend: str, as_json: bool) -> None:
    """Count several patterns in a generated graph and print a table.

    Generates a seeded Barabási–Albert graph (no download), then counts each
    pattern twice on the best available backend: all embeddings, and distinct
    subgraphs (found once each through symmetry breaking, not by division).

    The check column is independent of those counts: on a sample, the
    subgraph induced by the graph's first S vertices (S <= 32, shown in the
    column, the oldest and densest part), the backend's two counts must equal
    the pure-Python reference engine listing every embedding without symmetry
    breaking and the distinct subgraphs among them (the reference engine is
    too slow for the whole graph).

    \b
    Examples:
      warpmatch demo
      warpmatch demo --n 50000 --patterns triangle,4-clique,house --json
    """
    from .api import count_result
    from .engine import resolve_backend
    from .graph import barabasi_albert
    from .query import get_pattern

    names = [p.strip() for p in pattern_list.split(",") if p.strip()]
    queries = [get_pattern(p) for p in names]          # fail fast on a typo
    engine = resolve_backend(backend)
    t_start = time.perf_counter()
    g = barabasi_albert(n, m, seed=seed)
    g_s = time.perf_counter() - t_start
    click.echo(f"graph: Barabási–Albert n={n:,} m={m} seed={seed}: {_graph_line(g)} "
               f"[{g_s:.2f} s]")
    # compile (or load from numba's cache) once on a tiny graph of the same dtypes,
    # so the table's seconds are search time and the JIT cost is reported apart
    t0 = time.perf_counter()
    tiny = barabasi_albert(64, 2, seed=seed)
    for mode in ("embeddings", "subgraphs"):
        count_result(tiny, queries[0], mode=mode, backend=engine.name)
    jit_s = time.perf_counter() - t0
    click.echo(f"backend: {engine.name} (warm-up incl. JIT compilation or cache load: "
               f"{jit_s:.2f} s)")
    click.echo("")
    rows, out = [], []
    for q in queries:
        emb = count_result(g, q, mode="embeddings", backend=engine.name)
        sub = count_result(g, q, mode="subgraphs", backend=engine.name)
        aut = int(sub.plan.aut_size)
        ok, ref = _demo_check(g, q, engine.name)
        rows.append([q.name, q.k, f"{emb.count:,}", f"{sub.count:,}", aut,
                     f"{emb.seconds:.2f}", f"{sub.seconds:.2f}", emb.backend,
                     f"{_check_word(ok, ref)} ({ref['vertices']} v)"])
        out.append({"pattern": q.name, "k": int(q.k), "embeddings": emb.count,
                    "subgraphs": sub.count, "automorphisms": aut,
                    "seconds_embeddings": round(emb.seconds, 6),
                    "seconds_subgraphs": round(sub.seconds, 6), "backend": emb.backend,
                    "check": ok, "check_sample": ref})
    click.echo(_table(["pattern", "k", "embeddings", "subgraphs", "|Aut|", "emb s", "sub s",
                       "backend", "check (sample)"], rows,
                      [False, True, True, True, True, True, True, False, False]))
    total = time.perf_counter() - t_start
    click.echo("")
    click.echo(f"counts are non-induced; embeddings = every injective map, subgraphs = "
               f"distinct subgraphs. Total {total:.1f} s.")
    click.echo(f"check (sample): on the subgraph induced by the first (v) vertices, "
               f"{engine.name}'s counts equal the reference engine's (every embedding listed, "
               f"no symmetry breaking), which is too slow for the whole graph.")
    if not all(o["check"] for o in out):
        bad = ", ".join(o["pattern"] for o in out if not o["check"])
        raise click.ClickException(f"{engine.name} and the reference engine disagree on a "
                                   f"sample of the graph for: {bad}")
    if as_json:
        _emit_json({"graph": {"generator": "barabasi_albert", "n": n, "m": m, "seed": seed,
                              "vertices": g.n, "edges": g.num_edges},
                    "backend": engine.name, "mode": "embeddings+subgraphs", "induced": False,
                    "seconds": round(total, 6), "warmup_seconds": round(jit_s, 6),
                    "patterns": out})



# -------------------------------------------------------------------- stream
STREAM_BACKENDS = ("auto", "cpu", "gpu")
#: extension -> format of the `stream --output` deltas file
DELTA_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl",
                 ".ndjson": "jsonl", ".csv": "csv"}


def _delta_format(path: str) -> str:
    ext = Path(path).suffix.lower()
    if ext not in DELTA_FORMATS:
        raise click.BadParameter(f"{path!r}: use a .parquet, .jsonl or .csv file",
                                 param_hint="'--output'")
    return DELTA_FORMATS[ext]


def _delta_columns(query_names: Sequence[str], counts_only: bool,
                   has_time: bool) -> tuple[list[str], list[str]]:
    """(leading columns, data columns) of the deltas file; query names never clash."""
    lead = ["update"] + (["time"] if has_time else [])
    if counts_only:
        return lead, ["plus", "minus", "valid"]
    lead.insert(1, "sign")
    taken = {"update", "sign", "time"}
    return lead, [f"q_{n}" if str(n) in taken else str(n) for n in query_names]


class DeltaWriter:
    """Writes ``warpmatch stream --output`` batch by batch (Parquet, JSON lines or CSV).

    Match rows: ``update`` (global index of the update in the stream),
    ``sign`` (+1 appeared, -1 disappeared), ``time`` (when the stream has
    timestamps), then one column per query vertex (external ids). With
    ``counts_only`` one row per update: ``update``, ``time``, ``plus``,
    ``minus``, ``valid``. The schema is fixed by the first batch (which tells
    whether the stream has timestamps and their type).
    """

    def __init__(self, path: Path, fmt: str, query_names: Sequence[str],
                 counts_only: bool) -> None:
        self.path, self.fmt, self.names = path, fmt, list(query_names)
        self.counts_only = counts_only
        self.rows = 0
        self.columns: list[str] | None = None
        self._w: Any = None
        self._fh: Any = None
        self._time_dtype: Any = None

    def _open(self, time_dtype: Any) -> None:
        import numpy as np
        import pyarrow as pa
        lead, data = _delta_columns(self.names, self.counts_only, time_dtype is not None)
        self.columns = lead + data
        self._time_dtype = time_dtype
        types = {"update": pa.int64(), "sign": pa.int8(), "plus": pa.int64(),
                 "minus": pa.int64(), "valid": pa.bool_()}
        if time_dtype is not None:
            types["time"] = pa.from_numpy_dtype(np.dtype(time_dtype))
        self._schema = pa.schema([(c, types.get(c, pa.int64())) for c in self.columns])
        if self.fmt == "parquet":
            import pyarrow.parquet as pq
            self._w = pq.ParquetWriter(os.fspath(self.path), self._schema, compression="zstd")
        elif self.fmt == "csv":
            import pyarrow.csv as pcsv
            self._w = pcsv.CSVWriter(os.fspath(self.path), self._schema,
                                     write_options=pcsv.WriteOptions(quoting_header="none"))
            self._w.write_table(self._schema.empty_table())   # the header, even for no rows
        else:
            self._fh = open(self.path, "wb")

    def write(self, delta: Any, offset: int, time: Any) -> None:
        """Append the rows of one ``ContinuousMatcher.apply`` result (``offset``: its first
        update's global index; ``time``: the batch's timestamps or ``None``)."""
        import numpy as np
        if self.columns is None:
            self._open(None if time is None else time.dtype)
        if self.counts_only:
            upd = np.arange(len(delta.plus_counts), dtype=np.int64)
            data = [np.asarray(delta.plus_counts, np.int64), np.asarray(delta.minus_counts,
                                                                        np.int64),
                    np.asarray(delta.valid, bool)]
        else:
            plus = np.asarray(delta.plus, np.int64).reshape(-1, len(self.names))
            minus = np.asarray(delta.minus, np.int64).reshape(-1, len(self.names))
            rows = np.concatenate([minus, plus])
            upd = np.concatenate([np.asarray(delta.minus_update, np.int64),
                                  np.asarray(delta.plus_update, np.int64)])
            sign = np.concatenate([np.full(minus.shape[0], -1, np.int8),
                                   np.ones(plus.shape[0], np.int8)])
            # by update, and within one update the matches that disappear first
            order = np.argsort(upd, kind="stable")
            rows, upd, sign = rows[order], upd[order], sign[order]
            data = [rows[:, j] for j in range(rows.shape[1])]
        cols = [upd + offset] + ([] if self.counts_only else [sign])
        if self._time_dtype is not None:
            if time is None:
                raise click.ClickException("the update stream stopped carrying timestamps")
            t = np.asarray(time)[upd]
            if t.dtype != self._time_dtype:
                if np.dtype(self._time_dtype).kind == "i" and np.any(t != np.floor(t)):
                    raise click.ClickException("decimal timestamps after integer ones")
                t = t.astype(self._time_dtype)
            cols.append(t)
        cols += data
        if not upd.size:
            return
        self.rows += int(upd.size)
        if self._fh is not None:
            self._fh.write(_jsonl(self.columns, cols))
            return
        import pyarrow as pa
        table = pa.Table.from_arrays([pa.array(np.ascontiguousarray(c)) for c in cols],
                                     schema=self._schema)
        self._w.write_table(table)

    def close(self) -> None:
        """Finish the file (Parquet footer); a stream without batches gets an empty table."""
        if self.columns is None:
            self._open(None)
        if self._w is not None:
            self._w.close()
            self._w = None
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _jsonl(names: Sequence[str], cols: Sequence[Any], chunk: int = 1 << 20) -> bytes:
    """JSON lines of parallel numeric/bool columns, joined column-wise by pyarrow.

    Every row is ``{"name": value, ...}``; pyarrow's number-to-string casts give
    valid JSON numbers (``3``, ``1.5``, ``2e+20``) and ``true``/``false``. Rows
    go in chunks so a string array never nears its 2 GiB offset limit.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    keys = [("{" if j == 0 else ",") + json.dumps(str(n)) + ":" for j, n in enumerate(names)]
    n_rows = len(cols[0]) if cols else 0
    out = []
    for lo in range(0, n_rows, chunk):
        parts: list[Any] = []
        for key, col in zip(keys, cols):
            parts += [key, pc.cast(pa.array(np.asarray(col)[lo:lo + chunk]), pa.string())]
        line = pc.binary_join_element_wise(*parts, "}\n", "")
        offs = np.frombuffer(line.buffers()[1], np.int32)[line.offset:line.offset + len(line) + 1]
        out.append(line.buffers()[2].to_pybytes()[offs[0]:offs[-1]])
    return b"".join(out)


def _stream_options(f: Callable) -> Callable:
    f = click.option("--backend", type=click.Choice(STREAM_BACKENDS), default="auto",
                     show_default=True,
                     help="Engine: auto picks the GPU if CuPy and a device exist, else cpu.")(f)
    f = click.option("--induced", is_flag=True,
                     help="Induced: non-adjacent query vertices map to non-adjacent data "
                          "vertices (an insertion can then also remove matches).")(f)
    f = click.option("--mode", type=click.Choice(["embeddings", "subgraphs"]),
                     default="embeddings", show_default=True,
                     help="embeddings: every injective map; subgraphs: each distinct "
                          "subgraph once.")(f)
    return f


@cli.command("stream", context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.argument("query")
@click.argument("updates")
@click.option("--batch-size", type=click.IntRange(min=1), default=1024, show_default=True,
              help="Updates matched together (in parallel); results do not depend on it.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Deltas file (.parquet, .jsonl or .csv): one row per match that appears "
                   "(sign +1) or disappears (sign -1), with the update's index and time; "
                   "with --counts-only one row per update.")
@click.option("--counts-only", is_flag=True,
              help="Compute per-update counts only, never the matches themselves.")
@click.option("--on-invalid", type=click.Choice(["error", "skip"]), default="error",
              show_default=True,
              help="An update inserting an existing edge, deleting a missing one or making "
                   "a self-loop: stop with an error naming its line, or skip it (counted; "
                   "the first one skipped is named on stderr).")
@click.option("--update-labels/--no-update-labels", "update_labels", default=None,
              help="Text UPDATES: the 4th field is an edge label / there is no label field "
                   "(a 4th field is the timestamp). Default: a '# columns:' header "
                   "decides, else a 4th field is a label and a 5th a timestamp.")
@click.option("--updates-format", type=click.Choice(["text", "parquet", "csv"]), default=None,
              help="Format of UPDATES (default: from the extension; stdin: Parquet if it "
                   "starts with its magic bytes, else text).")
@_stream_options
@_graph_options
@_json_option
@_debug_option
def stream(graph: str, query: str, updates: str, batch_size: int, output: str | None,
           counts_only: bool, on_invalid: str, update_labels: bool | None,
           updates_format: str | None, mode: str, induced: bool, backend: str,
           fmt: str | None, directed: bool, vertex_labels: str | None, as_json: bool) -> None:
    """Keep the matches of QUERY in GRAPH up to date while UPDATES change it.

    UPDATES holds one edge update per line, in GRAPH's vertex id space:
    "u v +" inserts, "u v -" deletes (also 1/-1, insert/delete), optionally
    followed by an edge label and a timestamp; "v ID LABEL" declares a new
    vertex of a labeled graph; '#' comments. Parquet/CSV tables with columns
    src, dst, op[, label][, time] work too. "-" reads stdin as it arrives,
    so a producer can pipe updates in.

    Updates apply one by one in arrival order: for each, the matches that
    appear (+) and disappear (-) are found incrementally, never by
    recounting. The summary gives the count before and after the stream
    and the totals added and removed: before + added - removed = after.

    \b
    Examples:
      warpmatch stream web.txt triangle updates.txt
      warpmatch stream web.txt "a-b, b-c, c-d, d-a" updates.parquet -o deltas.parquet
      producer | warpmatch stream g0.wmg triangle - --counts-only --json
      warpmatch stream-gen web.txt --out ups.txt --initial g0.wmg   (make a test stream)
      warpmatch stream-gen CollegeMsg.txt --temporal --out msg.txt --initial g0.wmg
      warpmatch stream g0.wmg triangle msg.txt      (replay a 'src dst time' log)
    """
    import numpy as np

    from ._progress import ProgressBar
    from ._writers import atomic_path
    from .api import as_query, describe_count
    from .stream.matcher import ContinuousMatcher
    from .stream.updates import iter_update_batches, read_updates, split_batches

    ofmt = _delta_format(output) if output else None
    g, load_s = _load_graph(graph, fmt, directed, vertex_labels)
    q = as_query(query, g)
    if updates == "-":
        total = None
        batches = iter_update_batches("-", batch_size, labels=update_labels, fmt=updates_format)
    else:
        ups = read_updates(updates, labels=update_labels, fmt=updates_format)
        total = len(ups)
        batches = split_batches(ups, batch_size)
    t0 = time.perf_counter()
    cm = ContinuousMatcher(g, q, mode=mode, induced=induced, backend=backend,
                           on_invalid=on_invalid)
    initial = int(cm.initial_count)
    init_s = time.perf_counter() - t0
    want_rows = output is not None and not counts_only
    n_upd = added = removed = invalid = ins = dels = nbatch = 0
    has_time = False
    first_skipped = ""                         # where and why, for the warning at the end
    t1 = time.perf_counter()
    with contextlib.ExitStack() as stack:
        writer = None
        if output is not None:
            assert ofmt is not None
            tmp = stack.enter_context(atomic_path(output))
            writer = DeltaWriter(tmp, ofmt, q.names, counts_only)
            stack.callback(writer.close)       # before the rename (or the cleanup)
        bar = stack.enter_context(ProgressBar(q.name, unit="updates", total=total))
        for batch in batches:
            delta = cm.apply(batch, counts_only=not want_rows)
            if writer is not None:
                writer.write(delta, n_upd, batch.time)
            valid = delta.valid
            n_upd += len(batch)
            nbatch += 1
            added += int(delta.added)
            removed += int(delta.removed)
            if not first_skipped and not valid.all():
                i = int(np.flatnonzero(~valid)[0])
                first_skipped = f"{batch.where(i)}: {delta.reasons[i]}"
            invalid += int(valid.size - valid.sum())
            ins += int(((batch.op > 0) & valid).sum())
            dels += int(((batch.op < 0) & valid).sum())
            has_time = has_time or batch.time is not None
            bar.update(len(batch))
    seconds = time.perf_counter() - t1
    if invalid:
        # --on-invalid skip: say which, so a skipped update is never a silent one
        click.echo(f"warpmatch: warning: skipped {invalid:,} invalid update"
                   f"{'' if invalid == 1 else 's'} (they change nothing); the first: "
                   f"{first_skipped}", err=True)
    final = int(cm.count)
    backend_name = str(cm.backend)
    rate = n_upd / seconds if seconds > 0 else float("inf")
    click.echo(f"{describe_count(initial, mode, induced, q.name)} before the stream, "
               f"{final:,} after {n_upd:,} updates")
    click.echo(f"  matches: +{added:,} appeared, -{removed:,} disappeared "
               f"({initial:,} + {added:,} - {removed:,} = {initial + added - removed:,})")
    click.echo(f"  updates: {ins:,} insertions, {dels:,} deletions"
               + (f", {invalid:,} invalid skipped" if invalid else "")
               + f"; {seconds:.3f} s, {rate:,.0f} updates/s (batch size {batch_size:,}, "
                 f"{nbatch:,} batch{'' if nbatch == 1 else 'es'})")
    click.echo(f"  in {_graph_line(g)}; backend {backend_name}; initial count "
               f"{init_s:.3f} s")
    if writer is not None:
        assert writer.columns is not None
        what = "per-update counts" if counts_only else "delta matches"
        click.echo(f"  {writer.rows:,} rows of {what} written to {output} "
                   f"(columns {', '.join(writer.columns)})")
    if as_json:
        _emit_json({
            "initial_count": initial, "final_count": final, "added": added,
            "removed": removed, "updates": n_upd, "seconds": round(seconds, 6),
            "mode": mode, "induced": induced, "backend": backend_name, "invalid": invalid,
            "insertions": ins, "deletions": dels, "batch_size": batch_size,
            "batches": nbatch, "updates_per_second": round(rate, 3) if n_upd else 0.0,
            "initial_seconds": round(init_s, 6), "load_seconds": round(load_s, 6),
            "graph": graph, "graph_name": g.name, "query": q.name, "query_dsl": q.to_dsl(),
            "updates_source": updates, "timestamps": has_time, "on_invalid": on_invalid,
            "output": output, "format": ofmt,
            "rows": None if writer is None else writer.rows,
            "columns": None if writer is None else writer.columns,
            "semantics": describe_count(final, mode, induced, q.name),
        })


@cli.command("stream-gen", context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="The update stream to write (.txt text, .parquet or .csv).")
@click.option("--initial", "initial", required=True, type=click.Path(dir_okay=False),
              help="The initial graph G0 to write (.wmg recommended: it keeps isolated "
                   "vertices, labels and ids).")
@click.option("--insert-fraction", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="Fraction of GRAPH's edges removed from G0 and inserted by the stream.")
@click.option("--delete-fraction", type=click.FloatRange(0, 1), default=0.05,
              show_default=True,
              help="Fraction of GRAPH's edges (of those in G0) deleted by the stream.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--temporal", is_flag=True,
              help="GRAPH is a timestamped message log ('src dst time' lines, e.g. SNAP "
                   "CollegeMsg): replay it in time order; G0 has its vertices, no edges.")
@click.option("--window", type=click.FloatRange(min=0, min_open=True), default=None,
              help="With --temporal: an edge expires this long (in the log's time unit) "
                   "after its last message.")
@_graph_options
@_json_option
@_debug_option
def stream_gen(graph: str, out: str, initial: str, insert_fraction: float,
               delete_fraction: float, seed: int, temporal: bool, window: float | None,
               fmt: str | None, directed: bool, vertex_labels: str | None,
               as_json: bool) -> None:
    """Make an update stream from GRAPH: write the initial graph and the updates.

    By default follows the continuous-matching papers (GCSM, RapidFlow): a
    random --insert-fraction of the edges is left out of the initial graph
    and inserted by the stream, a random --delete-fraction of the remaining
    edges is deleted, the two shuffled together (seeded). With --temporal,
    GRAPH is a message log whose edges appear with their first message (and
    expire after --window).

    \b
    Examples:
      warpmatch stream-gen web.txt --out ups.txt --initial g0.wmg --seed 1
      warpmatch stream-gen CollegeMsg.txt --temporal --window 604800 --out msg.txt --initial g0.wmg
      warpmatch stream g0.wmg triangle ups.txt
    """
    from ._writers import atomic_path
    from .graph.formats import output_graph_format
    from .stream.updates import (
        make_stream,
        output_update_format,
        replay_temporal,
        write_updates,
    )

    # decided from the user's names, before the work: a bad name fails at once and names
    # the user's file, and the writers below never guess from a temporary file's name
    ups_fmt = output_update_format(out)
    g0_fmt = output_graph_format(initial)
    if insert_fraction + delete_fraction > 1:
        raise click.BadParameter("--insert-fraction + --delete-fraction must be <= 1",
                                 param_hint="'--delete-fraction'")
    if window is not None and not temporal:
        raise click.UsageError("--window applies to --temporal logs only")
    if temporal and (fmt or vertex_labels):
        raise click.UsageError("--temporal reads a 'src dst time' log; --format and "
                               "--vertex-labels do not apply")
    t0 = time.perf_counter()
    if temporal:
        g0, ups = replay_temporal(graph, window, directed=directed)
        how = f"temporal replay{f', window {window:g}' if window else ''}"
        src_line = f"{graph} ({g0.n:,} vertices, {'directed' if directed else 'undirected'})"
    else:
        g, _ = _load_graph(graph, fmt, directed, vertex_labels)
        g0, ups = make_stream(g, insert_fraction, delete_fraction, seed)
        how = (f"insert fraction {insert_fraction:g}, delete fraction {delete_fraction:g}, "
               f"seed {seed}")
        src_line = _graph_line(g)
    # OUT is renamed into place last: if either write fails, neither file appears
    with atomic_path(out) as tmp_u:
        write_updates(tmp_u, ups, ups_fmt)
        _write_graph_atomic(g0, initial, g0_fmt)
    n_ins = int((ups.op > 0).sum())
    n_del = len(ups) - n_ins
    click.echo(f"wrote {out}: {len(ups):,} updates ({n_ins:,} insertions, {n_del:,} "
               f"deletions; {how})")
    click.echo(f"wrote {initial}: {_graph_line(g0)}")
    click.echo(f"  from {src_line}; {time.perf_counter() - t0:.2f} s")
    if as_json:
        _emit_json({"updates": len(ups), "insertions": n_ins, "deletions": n_del,
                    "out": out, "initial": initial, "initial_vertices": g0.n,
                    "initial_edges": g0.num_edges, "seed": seed, "temporal": temporal,
                    "window": window, "insert_fraction": None if temporal else insert_fraction,
                    "delete_fraction": None if temporal else delete_fraction,
                    "timestamps": ups.time is not None})

if __name__ == "__main__":  # pragma: no cover
    main()
