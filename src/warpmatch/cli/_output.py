"""``-o``/``--output`` of ``match`` and ``stream``: files, special files and ``-`` (stdout).

The rules (documented in README.md, "Output files"), implemented by
:mod:`warpmatch._writers`:

- a regular file is written to a temporary file beside it, then renamed over
  it: it appears only when complete, with the permissions ``open(path, "w")``
  would give it (an existing file's mode, else 0666 less the umask);
- a symbolic link is written through, at its target; the link stays;
- a special file (``/dev/null``, a FIFO, a terminal) is written into directly,
  never replaced;
- ``-`` (or ``/dev/stdout``) is standard output: CSV or JSON lines stream
  there, batch by batch, and the summary lines move to stderr so that stdout
  carries the data only. Parquet and NPY cannot stream and are refused.

A reader that goes away (``warpmatch match ... -o - | head``) ends the command
quietly, with the status 141 a shell reports for a process killed by SIGPIPE,
instead of a "Broken pipe" error.
"""
from __future__ import annotations

import contextlib
import errno
import os
import sys
from typing import Iterator

import click

from .._writers import Sink, atomic_path, check_output, is_stdout

__all__ = ["output_sink", "check_output_target"]

#: exit status after the reader of our output went away: 128 + SIGPIPE, as a shell reports
#: for ``yes | head``
BROKEN_PIPE_STATUS = 141


def check_output_target(output: str, fmt: str, as_json: bool) -> bool:
    """Check ``-o OUTPUT`` before any work; return whether it is stdout.

    Parameters
    ----------
    output : str
        The ``-o`` value.
    fmt : str
        Its format (``parquet``, ``npy``, ``csv``, ``jsonl``).
    as_json : bool
        Whether ``--json`` was given: its object goes to stdout, which ``-o -``
        already fills with rows, so the two are refused together.

    Returns
    -------
    bool
        ``True`` when the rows go to stdout (the summary then goes to stderr).

    Raises
    ------
    click.UsageError
        For ``--json`` with output to stdout.
    WarpmatchError
        For a format that cannot stream to stdout or a pipe.
    """
    check_output(output, fmt)
    to_stdout = is_stdout(output)
    if to_stdout and as_json:
        raise click.UsageError("--json prints to stdout, which '-o -' fills with rows; "
                               "write the rows to a file to get the JSON summary")
    return to_stdout


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's last flush of stdout cannot fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@contextlib.contextmanager
def output_sink(output: str) -> Iterator[Sink]:
    """What the writers of ``-o OUTPUT`` write into.

    Yields stdout's binary stream for ``-`` (and ``/dev/stdout``), the file
    itself for a special file, else a temporary path renamed to ``OUTPUT``
    (through symlinks) when the block ends without an error.

    Raises
    ------
    click.exceptions.Exit
        With status 141 when the reader of stdout or of a FIFO went away.
    """
    try:
        if is_stdout(output):
            # click's stream, not sys.stdout.buffer: CliRunner tests capture it
            out = click.get_binary_stream("stdout")
            yield out
            out.flush()
        else:
            with atomic_path(output, special="direct") as tmp:
                yield tmp
    except OSError as exc:
        # pyarrow reports EPIPE as a plain OSError, Python as BrokenPipeError
        if not (isinstance(exc, BrokenPipeError) or exc.errno == errno.EPIPE
                or "Broken pipe" in str(exc)):
            raise
        if is_stdout(output):
            _silence_stdout()
        raise click.exceptions.Exit(BROKEN_PIPE_STATUS) from None
