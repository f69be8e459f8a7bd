"""A deadline for a running numba kernel call: one daemon thread per process that, at each
armed deadline, writes a stop value into the call's flag array, which the kernel's lanes
read at each step (:mod:`~warpmatch.engine._cpu_kernels`).

Map: :class:`Watchdog` (``arm`` a flag for so many seconds, ``disarm`` it when the call
returns) < :func:`watchdog` (the process's one instance, started on first use).

Why (issue 23): the CPU engine sizes each call's step budget from the previous call's
steps per second, and a step's cost varies with the region of the search (a scanned
position may fail at the first list or pass every intersection, injectivity and
leaf-group test). Human ``query_sparse_20_72`` had one call of 0.113 s and the next, on
about the same budget, of 3.07 s, so its 1 s time limit and the order race's turns
waited for it. The deadline bounds a call's length whatever its steps cost.

- Not from any paper: the kernels of RI, DP-iso and GraphQL run to completion.
- One thread for every engine of the process (the order race drives up to five
  searches in turns, and several may be armed at once from different threads).
"""
from __future__ import annotations

import heapq
import itertools
import os
import threading
import time

import numpy as np

__all__ = ["Watchdog", "watchdog", "STOP_NOW"]

#: the value the watchdog writes to ``flag[0]``: every lane stops at its next resumable
#: point (a lane out of budget writes 1, after which the others stop once they have done
#: an eighth of theirs)
STOP_NOW = 2


class Watchdog:
    """Writes :data:`STOP_NOW` into armed flags at their deadlines (a daemon thread)."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._armed: dict[int, np.ndarray] = {}
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, flag: np.ndarray, seconds: float) -> int:
        """Write :data:`STOP_NOW` to ``flag[0]`` in ``seconds`` unless disarmed first.

        Parameters
        ----------
        flag : numpy.ndarray
            The kernel call's int64 flag array.
        seconds : float
            Time from now.

        Returns
        -------
        int
            The token for :meth:`disarm`.
        """
        token = next(self._ids)
        with self._cv:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="warpmatch-watchdog",
                                                daemon=True)
                self._thread.start()
            self._armed[token] = flag
            heapq.heappush(self._heap, (time.monotonic() + seconds, token))
            self._cv.notify()
        return token

    def disarm(self, token: int) -> None:
        """Forget the deadline ``token`` (a no-op once it has fired)."""
        with self._cv:
            self._armed.pop(token, None)

    def _loop(self) -> None:
        with self._cv:
            while True:
                now = time.monotonic()
                while self._heap and (self._heap[0][0] <= now
                                      or self._heap[0][1] not in self._armed):
                    _, token = heapq.heappop(self._heap)
                    flag = self._armed.pop(token, None)
                    if flag is not None:
                        flag[0] = STOP_NOW
                self._cv.wait(None if not self._heap else self._heap[0][0] - now)


_WATCHDOG = Watchdog()


def _after_fork() -> None:
    # a forked child has no watchdog thread (and maybe a held lock): start afresh
    global _WATCHDOG
    _WATCHDOG = Watchdog()


os.register_at_fork(after_in_child=_after_fork)


def watchdog() -> Watchdog:
    """The process's :class:`Watchdog`."""
    return _WATCHDOG
