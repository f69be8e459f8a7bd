"""Progress bars and the first-use compilation notice, on stderr, only on a terminal.

Engines report progress through a plain callback ``progress(done, total)``
(:data:`warpmatch.engine.base.Progress`), called from Python between their
short kernel calls, several times a second; they know nothing about bars.
This module adapts those callbacks to `tqdm <https://tqdm.github.io>`_ bars. A
bar appears only after ``delay`` seconds, so quick runs print nothing, and
never when stderr is piped or redirected, so logs and ``--json`` output stay
clean.

The kernels are compiled on their first use after an install (numba, and
NVRTC for the GPU), which took ~20 s in silence before the first ``stream``.
:func:`compile_notice` (entered by the CLI commands that search) shows a
one-line spinner while a compilation runs longer than half a second: numba's
own ``numba:compile`` events say when one starts and ends (a cached kernel
loads without one), and engines mark other compilations with
:func:`compiling`.
"""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Any, Iterator, TextIO

__all__ = ["ProgressBar", "stderr_is_terminal", "compile_notice", "compiling"]


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
        What is counted (``"updates"``, ``"rows"``); not shown with
        ``percent``. The default is ``"roots"``.
    enabled : bool or None, optional
        ``True`` shows the bar, ``False`` never does. The default, ``None``,
        shows it only when stderr is a terminal.
    delay : float, optional
        Seconds before the bar first appears. The default is ``0.5``, so quick
        runs print nothing.
    total : int or None, optional
        Known total (for row counts with a limit); engines' callbacks set it.
    percent : bool, optional
        Show a percentage, elapsed and remaining time, and the :meth:`note`,
        but not the counts: for engines' callbacks, whose units mean nothing
        to users. The default is ``False``.

    Examples
    --------
    >>> with ProgressBar("triangle", enabled=False) as bar:
    ...     bar(10, 100)      # what an engine calls
    ...     bar.update(5)     # what a writer of rows calls
    >>> bar.n
    15
    """

    def __init__(self, desc: str, unit: str = "roots", enabled: bool | None = None,
                 delay: float = 0.5, total: int | None = None, percent: bool = False) -> None:
        self.desc = desc
        self.unit = unit
        self.enabled = stderr_is_terminal() if enabled is None else bool(enabled)
        self.delay = delay
        self.total = total
        self.percent = percent
        self.n = 0
        self._bar: Any = None
        self._note = ""

    def _ensure(self) -> Any:
        if self._bar is None and self.enabled:
            from tqdm.auto import tqdm
            fmt = ("{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]"
                   if self.percent else None)
            self._bar = tqdm(total=self.total, desc=self.desc, unit=self.unit,
                             file=sys.stderr, delay=self.delay, leave=False,
                             dynamic_ncols=True, unit_scale=True, bar_format=fmt)
            if self._note:
                self._bar.set_postfix_str(self._note, refresh=False)
        return self._bar

    def note(self, text: str) -> None:
        """Show ``text`` after the bar (e.g. ``"1,234 rows"``), from the next refresh."""
        self._note = text
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)

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


# ----------------------------------------------------- compilation notice
class _Spinner:
    """A one-line ``warpmatch: compiling kernels ...`` spinner on ``stream``.

    :meth:`start` and :meth:`end` nest (numba compiles a kernel's callees
    inside its own compilation); the line appears ``delay`` seconds after the
    outermost start, is redrawn by a daemon thread every 0.2 s, and is erased
    at the outermost end, before anything else is printed.
    """

    FRAMES = "|/-\\"

    def __init__(self, stream: TextIO, delay: float = 0.5,
                 text: str = "compiling kernels (first run only)...") -> None:
        self.stream = stream
        self.delay = delay
        self.text = text
        self._lock = threading.Lock()
        self._depth = 0
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        with self._lock:
            self._depth += 1
            if self._depth > 1:
                return
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, args=(self._stop,),
                                            name="warpmatch-compile-notice", daemon=True)
            self._thread.start()

    def end(self, force: bool = False) -> None:
        with self._lock:
            self._depth = 0 if force else max(0, self._depth - 1)
            if self._depth > 0 or self._thread is None:
                return
            stop, thread = self._stop, self._thread
            self._stop = self._thread = None
        assert stop is not None
        stop.set()
        thread.join()

    def _run(self, stop: threading.Event) -> None:
        t0 = time.monotonic()
        if stop.wait(self.delay):
            return
        i = 0
        try:
            while not stop.is_set():
                self.stream.write(f"\r{self.FRAMES[i % 4]} warpmatch: {self.text} "
                                  f"{time.monotonic() - t0:.0f} s")
                self.stream.flush()
                i += 1
                stop.wait(0.2)
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        except (OSError, ValueError):   # stderr closed under us: nothing to show
            pass


#: the spinner of the active :func:`compile_notice`, if any
_SPINNER: _Spinner | None = None


def _numba_listener(spinner: _Spinner) -> Any:
    """A :class:`numba.core.event.Listener` that runs ``spinner`` during compilations."""
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            spinner.start()

        def on_end(self, ev: Any) -> None:
            spinner.end()

    return _Listener()


@contextlib.contextmanager
def compile_notice(enabled: bool | None = None, delay: float = 0.5) -> Iterator[None]:
    """Show a spinner on stderr while kernels compile, for the duration of the block.

    Parameters
    ----------
    enabled : bool or None, optional
        The default, ``None``, enables it only when stderr is a terminal.
    delay : float, optional
        Seconds a compilation must run before the spinner appears (loading a
        cached kernel takes less and prints nothing). The default is ``0.5``.

    Examples
    --------
    >>> with compile_notice(enabled=False):
    ...     pass
    """
    global _SPINNER
    on = stderr_is_terminal() if enabled is None else bool(enabled)
    if not on or _SPINNER is not None:
        yield
        return
    from numba.core import event

    spinner = _Spinner(sys.stderr, delay=delay)
    listener = _numba_listener(spinner)
    event.register("numba:compile", listener)
    _SPINNER = spinner
    try:
        yield
    finally:
        _SPINNER = None
        event.unregister("numba:compile", listener)
        spinner.end(force=True)    # an interrupted compilation never sent its end


@contextlib.contextmanager
def compiling() -> Iterator[None]:
    """Mark a compilation that numba's events do not see (NVRTC through CuPy).

    Does nothing unless a :func:`compile_notice` is active.
    """
    spinner = _SPINNER
    if spinner is None:
        yield
        return
    spinner.start()
    try:
        yield
    finally:
        spinner.end()
