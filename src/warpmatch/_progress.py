"""Progress bars for long runs, on stderr, only when stderr is a terminal.

Engines report progress through a plain callback ``progress(done, total)``
(:data:`warpmatch.engine.base.Progress`), called from Python between chunks of
search-tree roots; they know nothing about bars. This module adapts those
callbacks to `tqdm <https://tqdm.github.io>`_ bars. A bar appears only after
``delay`` seconds, so quick runs print nothing, and never when stderr is piped
or redirected, so logs and ``--json`` output stay clean.
"""
from __future__ import annotations

import sys
from typing import Any, TextIO

__all__ = ["ProgressBar", "stderr_is_terminal"]


def stderr_is_terminal(stream: TextIO | None = None) -> bool:
    """True if ``stream`` (default: ``sys.stderr``) is an interactive terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


class ProgressBar:
    """A lazily created tqdm bar that is also an engine progress callback.

    Parameters
    ----------
    desc : str
        Text before the bar, e.g. ``"triangle"``.
    unit : str, optional
        What is counted. The default is ``"roots"`` (search-tree roots done,
        which is what engines report while counting).
    enabled : bool or None, optional
        ``True`` shows the bar, ``False`` never does. The default, ``None``,
        shows it only when stderr is a terminal.
    delay : float, optional
        Seconds before the bar first appears. The default is ``0.5``, so quick
        runs print nothing.
    total : int or None, optional
        Known total (for row counts with a limit); engines' callbacks set it.

    Examples
    --------
    >>> with ProgressBar("triangle", enabled=False) as bar:
    ...     bar(10, 100)      # what an engine calls
    ...     bar.update(5)     # what a writer of rows calls
    >>> bar.n
    15
    """

    def __init__(self, desc: str, unit: str = "roots", enabled: bool | None = None,
                 delay: float = 0.5, total: int | None = None) -> None:
        self.desc = desc
        self.unit = unit
        self.enabled = stderr_is_terminal() if enabled is None else bool(enabled)
        self.delay = delay
        self.total = total
        self.n = 0
        self._bar: Any = None

    def _ensure(self) -> Any:
        if self._bar is None and self.enabled:
            from tqdm.auto import tqdm
            self._bar = tqdm(total=self.total, desc=self.desc, unit=self.unit,
                             file=sys.stderr, delay=self.delay, leave=False,
                             dynamic_ncols=True, unit_scale=True)
        return self._bar

    def __call__(self, done: int, total: int) -> None:
        """Engine callback: ``done`` of ``total`` units finished so far."""
        self.total = int(total)
        step = int(done) - self.n
        self.n = int(done)
        bar = self._ensure()
        if bar is not None:
            if bar.total != self.total:
                bar.total = self.total
            bar.update(step)

    def update(self, step: int) -> None:
        """Add ``step`` units (for writers that count rows)."""
        self.n += int(step)
        bar = self._ensure()
        if bar is not None:
            bar.update(int(step))

    def close(self) -> None:
        """Remove the bar from the terminal."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
