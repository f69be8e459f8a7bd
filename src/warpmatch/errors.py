"""Exceptions raised by warpmatch.

Every error a user can cause (bad file, bad query, impossible request) is a
subclass of :class:`WarpmatchError`, so the CLI can print it as one line on
stderr without a traceback, and library callers can catch one type.
"""
from __future__ import annotations


class WarpmatchError(Exception):
    """Base class of every error caused by user input or environment."""


class InputFormatError(WarpmatchError, ValueError):
    """A graph, query or update file is malformed.

    Parameters
    ----------
    path : str
        The file (or ``"<stdin>"`` / ``"<string>"``).
    line : int or None
        1-based line number, if the problem is on one line.
    message : str
        What is wrong.
    text : str or None
        The offending text, shown truncated.
    """

    def __init__(self, path: str, line: int | None, message: str, text: str | None = None):
        self.path = str(path)
        self.line = line
        self.text = text
        where = self.path if line is None else f"{self.path}:{line}"
        msg = f"{where}: {message}"
        if text is not None:
            shown = text if len(text) <= 80 else text[:77] + "..."
            msg += f": {shown!r}"
        super().__init__(msg)
        self._init_args = (path, line, message, text)

    def __reduce__(self) -> tuple:
        # rebuilt from the constructor's arguments, so that the error survives pickling
        # (a Dask worker or another process raises it, the client re-raises it)
        return (type(self), self._init_args)


class QueryError(WarpmatchError, ValueError):
    """The query graph is invalid (empty, disconnected, unparsable, inconsistent with the graph)."""


class GraphError(WarpmatchError, ValueError):
    """A data graph cannot be built from the given arrays (bad ids, mismatched lengths, ...)."""


class BackendUnavailableError(WarpmatchError, RuntimeError):
    """The requested backend cannot run here (e.g. ``backend="gpu"`` without CuPy or a device)."""


class BudgetError(WarpmatchError, MemoryError):
    """The work does not fit the memory budget; the message names the sizes."""

    def __new__(cls, *args: object, **kwargs: object) -> "BudgetError":
        # MemoryError's own __new__ refuses subclasses when called directly, which is
        # how tblib (Dask's exception pickling) rebuilds an error raised on a worker
        return WarpmatchError.__new__(cls, *args)


class DistributedError(WarpmatchError, RuntimeError):
    """A Dask cluster cannot run the work: a worker that cannot read the graph or lacks a
    dependency, a missing ``warpmatch[dist]`` extra; the message names the worker."""


class UnknownLabelWarning(UserWarning):
    """A query label does not occur in the data graph, so the answer is 0."""


class InputCleanupWarning(UserWarning):
    """Self-loops or duplicate edges were dropped while building a graph."""
