"""The collector stage of DCSM's pipeline (§1.3): a batch's results are written by one
thread while the next batch is matched (issue 17, item 3).

Map: :class:`Collector` (:meth:`~Collector.put` one batch's results, :meth:`~Collector.close`
waits for every write; as a context manager it waits on the way out, after an error too).

DCSM runs three stages at once: the updater applies batch ``k + 1`` to the multi-version
graph, the matcher matches batch ``k``, and the collector hands batch ``k - 1``'s results
on. ``warpmatch stream --output`` wrote each batch's rows in its main loop, between two
batches' matching: on a 2-core box (R-MAT of 65,536 vertices and 454,223 edges, 68,135
updates in batches of 1,024, triangle, CPU engine) listing took 1.2 s and writing the 9.3M
rows 0.93 s to Parquet, 1.7 s to CSV and 3.5 s to JSON lines. The writers (pyarrow's
encoders, the engines' numba kernels, CuPy's waits for the device) release the GIL, so a
writer thread overlaps them.

How it differs from DCSM:

- One writer thread on the host, fed in batch order, not a collector that copies results
  back from a device buffer while kernels run.
- The updater is not overlapped with the matcher: the engines read a single-version graph
  (:mod:`warpmatch.stream.mvg_device` holds the multi-version one, which they do not read
  yet), so a batch is applied after it is matched.
- Back-pressure by count: :meth:`Collector.put` waits while ``pending`` results are not yet
  written (default 1: the write of batch ``k`` runs while batch ``k + 1`` is matched), so
  at most ``pending + 1`` batches' results are held at once.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

__all__ = ["Collector"]


class Collector:
    """Calls ``write(*args)`` for each :meth:`put`, in order, on one background thread.

    Parameters
    ----------
    write : callable
        Writes one batch's results (e.g. :meth:`warpmatch.cli.stream.DeltaWriter.write`).
        What is put must not change afterwards: the matcher's results are new arrays
        every batch.
    pending : int, optional
        Results handed over and not yet written, at most; :meth:`put` waits for the oldest
        write beyond that. ``0``: no thread, :meth:`put` writes before it returns (the
        one-thread loop, for A/B runs: ``WARPMATCH_STREAM_COLLECTOR=0`` in
        ``warpmatch stream``). The default is ``1``.

    Attributes
    ----------
    write_seconds : float
        Time spent inside ``write``.
    waited_seconds : float
        Time :meth:`put` and :meth:`close` waited for the writer (matching was faster).

    Notes
    -----
    The first exception a write raises is raised again by the next :meth:`put` or by
    :meth:`close`, and the writes handed over after it are skipped, so that the output
    never has a gap. When the body of a ``with`` block raises, the writes already handed
    over are finished (what came before the error is written, as in one thread) and the
    body's exception goes on; a write error is then dropped.

    Examples
    --------
    >>> out = []
    >>> with Collector(out.append) as c:
    ...     for i in range(5):
    ...         c.put(i)
    >>> out
    [0, 1, 2, 3, 4]
    """

    def __init__(self, write: Callable[..., Any], pending: int = 1) -> None:
        if int(pending) < 0:
            raise ValueError(f"pending must be >= 0, got {pending}")
        self._write = write
        self.pending = int(pending)
        self._closed = False
        self._pool: ThreadPoolExecutor | None = None if self.pending == 0 else \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="warpmatch-collector")
        self._queue: deque[Future] = deque()
        self._failed = threading.Event()
        self.write_seconds = 0.0
        self.waited_seconds = 0.0

    def _run(self, args: tuple) -> None:
        if self._failed.is_set():       # an earlier write failed: leave no gap behind it
            return
        t = time.perf_counter()
        try:
            self._write(*args)
        except BaseException:
            self._failed.set()
            raise
        finally:
            self.write_seconds += time.perf_counter() - t

    def _reap(self, keep: int) -> None:
        """Wait until at most ``keep`` writes are pending; raise the first write error."""
        while self._queue and (len(self._queue) > keep or self._queue[0].done()):
            t = time.perf_counter()
            try:
                self._queue.popleft().result()      # (no wait where it is done)
            finally:
                self.waited_seconds += time.perf_counter() - t

    def put(self, *args: Any) -> None:
        """Hand one batch's results to the writer (waits while ``pending`` are unwritten).

        Raises
        ------
        Exception
            The first exception an earlier write raised.
        RuntimeError
            After :meth:`close`.
        """
        if self._closed:
            raise RuntimeError("this collector is closed")
        if self._pool is None:              # pending=0: write here
            self._run(args)
            return
        self._reap(self.pending - 1)
        self._queue.append(self._pool.submit(self._run, args))

    def close(self) -> None:
        """Wait for every write and stop the thread; raise the first write error."""
        if self._closed:
            return
        self._closed = True
        if self._pool is None:
            return
        try:
            self._reap(0)
        finally:
            self._pool.shutdown(wait=True)
            self._pool = None

    def __enter__(self) -> "Collector":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type is None:
            self.close()
            return False
        # the body failed: finish what was handed over, and let the body's error go on
        try:
            self.close()
        except BaseException:       # noqa: BLE001 - the body's exception is the one to see
            pass
        return False
