"""Shared parts of the command line: error handling (:class:`WarpmatchGroup`), the
``warpmatch`` group itself, common options and small helpers.

Conventions (DESIGN.md, "Interfaces users expect"):

- errors a user can cause (:class:`~warpmatch.errors.WarpmatchError`, missing
  files, usage errors) print one line on stderr and exit non-zero, without a
  traceback; ``--debug`` (or ``WARPMATCH_DEBUG=1``) shows it;
- warnings (dropped self-loops, unknown labels) print one line each on stderr;
- progress bars go to stderr, only when stderr is a terminal;
- files are written atomically (temporary file, then rename).
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from .._version import __version__

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
BACKENDS = ("auto", "cpu", "gpu", "reference")


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
        from ..errors import InputCleanupWarning, UnknownLabelWarning, WarpmatchError

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
    from ..graph import read_graph
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
    from ..errors import InputFormatError
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
    from ..errors import QueryError
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

