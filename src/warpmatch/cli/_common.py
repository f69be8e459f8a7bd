"""Shared parts of the command line: error handling (:class:`WarpmatchGroup`), the
``warpmatch`` group itself, common options and small helpers.

Conventions (DESIGN.md, "Interfaces users expect"):

- errors a user can cause (:class:`~warpmatch.errors.WarpmatchError`, missing
  files, usage errors) print one line on stderr and exit non-zero, without a
  traceback; ``--debug`` (or ``WARPMATCH_DEBUG=1``) shows it;
- warnings (dropped self-loops, unknown labels) print one line each on stderr;
- progress bars go to stderr, only when stderr is a terminal;
- Ctrl-C (SIGINT) and SIGTERM stop every command within about a second (the
  engines return to Python between short kernel calls), with one line on
  stderr, exit status 130 or 143 (128 + the signal, as a shell reports), and
  no partial output file: both signals raise :class:`Interrupted`, so
  ``finally`` blocks and context managers clean up;
- files are written atomically (temporary file, then rename).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import click

from .._version import __version__

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
BACKENDS = ("auto", "cpu", "gpu", "reference")
#: the matching orders of warpmatch.plan.order (not imported here: it would slow every command's
#: start); tests/test_output_files.py checks that the two lists agree
ORDERS = ("auto", "ri", "gql", "core", "input")


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


class Interrupted(BaseException):
    """SIGINT or SIGTERM, raised in the main thread while a command runs (:class:`_SignalGuard`).

    Raising it makes ``finally`` blocks and context managers (temporary output
    files, progress bars) clean up. A ``BaseException``, like
    ``KeyboardInterrupt``, so ``except Exception`` handlers let it through;
    not a ``KeyboardInterrupt``, which click would turn into an abort after
    printing a blank line.

    Parameters
    ----------
    signum : int
        The signal received.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = int(signum)

    @property
    def message(self) -> str:
        """``"interrupted"`` (SIGINT) or ``"terminated"`` (SIGTERM)."""
        return "terminated" if self.signum == signal.SIGTERM else "interrupted"


class _SignalGuard:
    """SIGINT and SIGTERM raise :class:`Interrupted` while a command runs (main thread only).

    Two details make the interruption reliable:

    - A handler can run inside a callback from C (llvmlite calls Python while
      numba compiles), where ctypes swallows the exception ("Exception
      ignored ..."). ``sys.unraisablehook`` sees that: it hides the message
      and sends the signal again 20 ms later, so that the exception is raised
      anew in Python code outside such a callback (or later again, while an
      error is already on its way); and :attr:`signum` lets
      :meth:`WarpmatchGroup.main` report any error that follows (a library
      left half-way) as the interruption it is.
    - Once the exception is on its way, more signals (a second Ctrl-C,
      ``timeout`` repeating its signal) are ignored, so they cannot interrupt
      the removal of a temporary file.
    """

    def __init__(self) -> None:
        import threading
        self.signum: int | None = None      # the first signal received, if any
        self._lost = False                  # its exception was swallowed (see above)
        self._active = False
        self._lock = threading.Lock()
        self._timer: Any = None
        self._old: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        if not self._active:
            return                          # a resent signal that arrived on the way out
        if self.signum is not None and not self._lost:
            return                          # already stopping: let the clean-up finish
        self.signum = self.signum or signum
        if self._lost and sys.exc_info()[1] is not None:
            self._resend()                  # an error is on its way: not in its clean-up
            return
        self._lost = False
        raise Interrupted(self.signum)

    def _resend(self) -> None:
        """Send :attr:`signum` to this process in 20 ms, from another thread."""
        import threading

        def send() -> None:
            with self._lock:
                if self._active and self.signum is not None:
                    os.kill(os.getpid(), self.signum)
        self._timer = threading.Timer(0.02, send)
        self._timer.daemon = True
        self._timer.start()

    def _unraisable(self, info: Any) -> None:
        if isinstance(info.exc_value, Interrupted):
            self._lost = True
            self._resend()
        else:
            self._previous_hook(info)

    def __enter__(self) -> "_SignalGuard":
        import threading
        if threading.current_thread() is not threading.main_thread():
            return self
        self._old = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        self._active = True
        for sig in self._old:
            signal.signal(sig, self._handler)
        self._previous_hook = sys.unraisablehook
        sys.unraisablehook = self._unraisable
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._old:
            return
        with self._lock:                    # no resent signal after this point
            self._active = False
            if self._timer is not None:
                self._timer.cancel()
        sys.unraisablehook = self._previous_hook
        for sig, handler in self._old.items():
            if handler is not None:          # None: installed outside Python, leave it
                signal.signal(sig, handler)


#: the exceptions of interrupted commands, kept (with their tracebacks, so the frames and
#: what they hold) until the process ends: see :func:`_hold_interrupted`
_INTERRUPTED: list[BaseException] = []


def _hold_interrupted(exc: BaseException) -> None:
    """Keep ``exc``'s frames alive, so that objects an interruption left half-built are never
    freed (:func:`main` then ends the process without finalizers).

    A signal that lands while numba compiles can stop llvmlite between handing a native
    object to another and marking it as handed on; freeing its Python wrapper then frees
    the native object twice ("free(): double free detected", SIGABRT or SIGSEGV instead of
    exit status 130: 1 of 80 interrupted first runs on the 2-core box). The wrapper lives in
    the interrupted frames, which the traceback holds."""
    _INTERRUPTED.append(exc)


def _quiet_teardown() -> None:
    """After an interruption, hide what objects a library left half-built raise when they
    are freed: llvmlite's, interrupted while numba compiled, can fail in their
    ``__del__`` ("Exception ignored in: ObjectRef.__del__ ... 'PassBuilder' object has no
    attribute '_as_parameter_'", or ``OutputString.__del__`` with no ``_ptr``) after the
    one line a stopped command prints: at once for llvmlite's ``__del__`` (such an object
    can be freed as the interrupted call's frames go, before the exit), for everything at
    exit, so that a caller's process (tests through ``CliRunner``) keeps the rest of its
    hook until then."""
    import atexit
    previous = sys.unraisablehook

    def llvmlite_quiet(info: Any) -> None:
        if not str(getattr(info.object, "__module__", "")).startswith("llvmlite"):
            previous(info)
    sys.unraisablehook = llvmlite_quiet

    def quiet() -> None:
        sys.unraisablehook = lambda info: None
    atexit.register(quiet)


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
            guard = _SignalGuard()
            try:
                try:
                    with guard:
                        rv = super().main(args, prog_name or "warpmatch", complete_var,
                                          standalone_mode=False, **extra)
                except Exception as e:
                    if guard.signum is not None:   # what a library left half-way raised next
                        raise Interrupted(guard.signum) from e
                    raise
                code = rv if isinstance(rv, int) else 0
            except click.exceptions.Exit as e:   # --help, --version
                code = e.exit_code
            except Interrupted as e:
                from .._progress import stderr_is_terminal
                # on a terminal, '\r' writes over the '^C' that Ctrl-C echoed
                click.echo(f"{chr(13) if stderr_is_terminal() else ''}warpmatch: {e.message}",
                           err=True)
                code = 128 + e.signum
                _hold_interrupted(e)
                _quiet_teardown()
            except click.ClickException as e:
                ctx = getattr(e, "ctx", None)
                where = ctx.command_path if ctx is not None else "warpmatch"
                hint = f" (see '{where} --help')" if isinstance(e, click.UsageError) else ""
                click.echo(f"{where}: error: {_one_line(e.format_message())}{hint}", err=True)
                code = e.exit_code
            except (click.Abort, KeyboardInterrupt) as e:   # SIGINT outside the main thread
                click.echo("warpmatch: interrupted", err=True)
                code = 128 + signal.SIGINT
                _hold_interrupted(e)
                _quiet_teardown()
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
    """Entry point of the ``warpmatch`` console script (and ``python -m warpmatch``).

    An interrupted command's process ends with :func:`os._exit` once its output is
    flushed: the interpreter's own teardown would free what the interruption left
    half-built (:func:`_hold_interrupted`). Nothing else is lost: temporary files are
    removed and bars closed as the interruption unwinds, before this point.
    """
    held = len(_INTERRUPTED)
    code = cli.main(args=argv, prog_name="warpmatch", standalone_mode=False)
    if len(_INTERRUPTED) > held:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):   # a closed pipe: nothing more can reach it
                pass
        os._exit(code)
    sys.exit(code)


# -------------------------------------------------------------- shared bits
def _debug_option(f: Callable) -> Callable:
    # read by WarpmatchGroup.main from the raw arguments; declared so click accepts it anywhere
    return click.option("--debug", is_flag=True, expose_value=False,
                        help="Show the full traceback on errors.")(f)


def _threads_option(f: Callable) -> Callable:
    return click.option("--threads", type=click.IntRange(min=1), default=None, metavar="N",
                         help="CPU threads of the numba engines (default: one per core).")(f)


@contextlib.contextmanager
def running(threads: int | None = None) -> Iterator[None]:
    """The set-up of a command that searches: ``--threads``, and the compile notice.

    Sets numba's thread count for the block (restored after: tests run
    commands in one process), and shows a spinner on a terminal while
    kernels compile on their first use (:func:`warpmatch._progress.compile_notice`).

    Raises
    ------
    click.BadParameter
        For more threads than numba may start (``NUMBA_NUM_THREADS``, by
        default the number of cores).
    """
    from .._progress import compile_notice
    with contextlib.ExitStack() as stack:
        if threads is not None:
            import numba
            most = int(numba.config.NUMBA_NUM_THREADS)
            if threads > most:
                raise click.BadParameter(
                    f"{threads} is more than the {most} threads numba may use here (one per "
                    f"core; set NUMBA_NUM_THREADS to allow more)", param_hint="'--threads'")
            old = numba.get_num_threads()
            numba.set_num_threads(threads)
            stack.callback(numba.set_num_threads, old)
        stack.enter_context(compile_notice())
        yield


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
    f = click.option("--order", type=click.Choice(ORDERS), default="auto", show_default=True,
                     help="Matching order: auto (ri; a count --limit N of a labeled query "
                          "of 5+ vertices that has not reached N after 0.2 s also searches "
                          "in ri with its twins in place, the gql and core orders where "
                          "they differ and random orders, the first to reach N answering: "
                          "in turns on the CPU engine, on the CPU engine beside the GPU "
                          "engine's search (after 0.05 s there); a CPU "
                          "match --limit N that has found nothing by then lists whichever "
                          "order finds a match first), ri (RI's "
                          "greatest-constraint-first: most edges to "
                          "vertices already placed), gql (fewest candidates first), core "
                          "(GENEVA/CFL: the query's 2-core first, its smallest cycle first, "
                          "then the trees; RI's step within each), input (breadth-first from "
                          "query vertex 0).")(f)
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
  warpmatch show graph.txt triangle -o t.svg       matches and their neighbourhood
  warpmatch plot-stream deltas.parquet -o counts.png

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

