"""Per-update response time and latency of a stream (DCSM §1.1; issue 17 item 4).

Map: :class:`LatencyStats` (:meth:`~LatencyStats.record` one batch, :meth:`~LatencyStats.summary`
the p50/p99/max of both measures, throughput and the busy fraction) < :func:`_bins` (the
log-spaced histogram both measures are counted in).

For an update that arrived at ``a`` (when the producer handed it over) and whose batch began
at ``s`` and ended at ``e`` (its deltas available): response time ``s - a``, as DCSM (§1.1)
defines it ("the interval between its arrival and the start of its processing"), and
latency ``e - a``. Both are counted in a histogram of 100 bins per decade from 100 ns to
10^4 s, so that an endless stream needs constant memory: a quantile is exact to the bin
(2.3% of its value), the mean and the maximum are exact.

How it differs from DCSM:

- Arrival is when an update reached warpmatch (the reader thread of
  :func:`~warpmatch.stream.batching.timed_batches`, or the start of a call given a whole
  stream), not a timestamp in the stream.
- The busy fraction is the share of the stream's wall time spent inside ``apply`` (host and
  device together), not the GPU's own busy time.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

__all__ = ["LatencyStats"]

#: bins per decade of the histograms, and their range (seconds)
PER_DECADE = 100
LOW, HIGH = 1e-7, 1e4
_NBINS = int(round(math.log10(HIGH / LOW) * PER_DECADE)) + 2      # + below LOW, above HIGH


def _bins(seconds: np.ndarray) -> np.ndarray:
    """Histogram bin of each duration: 0 below :data:`LOW`, the last above :data:`HIGH`."""
    x = np.maximum(np.asarray(seconds, dtype=np.float64), LOW * 0.5)
    b = np.floor(np.log10(x / LOW) * PER_DECADE).astype(np.int64) + 1
    return np.clip(b, 0, _NBINS - 1)


def _upper(b: int) -> float:
    """The upper edge of bin ``b`` (seconds)."""
    if b <= 0:
        return LOW
    return LOW * 10.0 ** (b / PER_DECADE)


class LatencyStats:
    """Response time and latency of every update of a stream, in constant memory.

    Filled by :meth:`~warpmatch.stream.matcher.ContinuousMatcher.apply_stream`
    (as :attr:`~warpmatch.stream.matcher.ContinuousMatcher.latency`) and by
    ``warpmatch stream``; :meth:`summary` is what ``--json`` prints.

    Examples
    --------
    >>> import numpy as np
    >>> s = LatencyStats()
    >>> s.record(np.array([0.0, 0.5]), started=1.0, done=1.25)
    >>> d = s.summary()
    >>> d["updates"], round(d["latency"]["max"], 3), round(d["response"]["mean"], 3)
    (2, 1.25, 0.75)
    """

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forget every update counted so far."""
        self.updates = 0
        self.batches = 0
        self.busy = 0.0               # seconds inside the batches (started -> done)
        self.first: float | None = None   # earliest arrival
        self.last: float | None = None    # latest done
        self._hist = {k: np.zeros(_NBINS, np.int64) for k in ("response", "latency")}
        self._sum = {"response": 0.0, "latency": 0.0}
        self._max = {"response": 0.0, "latency": 0.0}

    def record(self, arrivals: np.ndarray, started: float, done: float) -> None:
        """Count one batch: its updates' arrival times, when it began and when it ended
        (all ``time.perf_counter()`` seconds)."""
        arr = np.asarray(arrivals, dtype=np.float64)
        n = int(arr.size)
        self.batches += 1
        self.busy += max(0.0, done - started)
        if n == 0:
            return
        self.updates += n
        lo = float(arr.min())
        self.first = lo if self.first is None else min(self.first, lo)
        self.last = done if self.last is None else max(self.last, done)
        for key, end in (("response", started), ("latency", done)):
            d = np.maximum(end - arr, 0.0)
            self._hist[key] += np.bincount(_bins(d), minlength=_NBINS)
            self._sum[key] += float(d.sum())
            self._max[key] = max(self._max[key], float(d.max()))

    def record_uniform(self, arrival: float, n: int, started: float, done: float) -> None:
        """:meth:`record` for ``n`` updates that all arrived at ``arrival`` (a stream given
        whole)."""
        self.record(np.full(max(n, 0), arrival), started, done)

    def timed(self, apply: Any, batch: Any, arrivals: np.ndarray) -> Any:
        """``apply(batch)``, its time counted with the batch's ``arrivals``: what every
        batch of a stream goes through (``apply_stream``, ``warpmatch stream``)."""
        started = time.perf_counter()
        out = apply(batch)
        self.record(arrivals, started, time.perf_counter())
        return out

    def quantile(self, key: str, q: float) -> float:
        """The ``q`` quantile (0..1) of ``"response"`` or ``"latency"``, in seconds: the
        upper edge of the bin that holds it (never above the maximum); 0.0 with no update."""
        h = self._hist[key]
        total = int(h.sum())
        if total == 0:
            return 0.0
        rank = max(1, int(math.ceil(q * total)))
        b = int(np.searchsorted(np.cumsum(h), rank))
        return min(_upper(b), self._max[key])

    def summary(self) -> dict[str, Any]:
        """``updates``, ``batches``, ``seconds`` (first arrival to last result),
        ``updates_per_second``, ``busy_fraction`` and, for ``response`` and ``latency``,
        ``p50``, ``p99``, ``max`` and ``mean`` (seconds)."""
        span = 0.0 if self.first is None or self.last is None else self.last - self.first
        out: dict[str, Any] = {
            "updates": self.updates, "batches": self.batches, "seconds": span,
            "updates_per_second": self.updates / span if span > 0 else 0.0,
            "busy_fraction": min(1.0, self.busy / span) if span > 0 else 0.0,
        }
        for key in ("response", "latency"):
            out[key] = {"p50": self.quantile(key, 0.5), "p99": self.quantile(key, 0.99),
                        "max": self._max[key],
                        "mean": self._sum[key] / self.updates if self.updates else 0.0}
        return out

    def line(self) -> str:
        """One line for a person: latency p50/p99/max and the response time's p50."""
        s = self.summary()
        lat, resp = s["latency"], s["response"]
        return (f"latency p50 {_ms(lat['p50'])}, p99 {_ms(lat['p99'])}, max "
                f"{_ms(lat['max'])}; response time p50 {_ms(resp['p50'])}; busy "
                f"{100 * s['busy_fraction']:.0f}%")


def _ms(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"
