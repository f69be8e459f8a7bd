"""Which path counts a batch when the batch path runs on a GPU: the host's sequential
path or the device.

Map: :class:`DeviceRoute` (the choice, :meth:`~DeviceRoute.device_first`; the timings,
:meth:`~DeviceRoute.timed`) < :class:`_Cost` (one path's time per batch, by size, from
its recent batches of about that size).

A GPU batch has a fixed cost that a handful of updates cannot repay: the overlay,
the candidate masks and the task list built on the host, copies both ways, several
launches and a synchronisation: 1.1 ms for a one-update triangle batch on a
10^7-edge R-MAT graph, an H200 host (``bench/batch_cost.py``: validation 0.08 ms,
overlay 0.13, candidate masks and tasks 0.10, copies 0.15, the storage step 0.22,
the kernel 0.13, the rest of the device step 0.20, apply 0.08). The sequential path
(:mod:`warpmatch.stream.sequential`) counts one update in tens of µs on the same
host stores, so at low arrival rates, where batches that close on time hold a few
updates, it answers far sooner; at high rates the batches grow and the device's
throughput wins. Both paths edit the same stores (the device refreshes the rows
the sequential runs rewrote: :mod:`warpmatch.stream._editlog`), so the choice is
made per batch from each path's measured time for a batch of that size.

This is not DCSM's design (§1.3-1.5: a pipelined device executor over a multi-version
graph, whose per-update cost on the device is what makes its low rates fast); it is
what the same targets need from the engines as they are.
"""
from __future__ import annotations

__all__ = ["DeviceRoute"]

#: a batch of at least this many updates goes to the device while the sequential path
#: was never timed (its time for it is unknown and may be far longer)
FIRST_DEVICE_SIZE = 256
#: the device is first tried once a batch's sequential time is predicted above this
#: (seconds): below it a GPU batch's fixed cost alone is longer (ms on an H200 host)
FIRST_DEVICE_S = 1e-3
#: weight of the older batches in a size bucket's averages, per batch
DECAY = 0.5
#: every this many batches the predicted slower path is taken once again, if it is
#: predicted at most RETRY times slower (a cold first timing must not rule it out)
REPROBE = 32
RETRY = 4.0


class _Cost:
    """Seconds per batch of ``size`` updates, from the recent batches of about that size.

    Sizes fall in power-of-two buckets; each keeps an exponential average of its
    batches' sizes and times (:data:`DECAY`), and a size is predicted from its own
    bucket (in proportion to its size), else on the line between the nearest timed
    buckets below and above. A size above every timed bucket is predicted in
    proportion for the sequential path (its work is per update) and at the largest
    timed batch's time for the device (``fixed=True``: most of a small device batch is
    fixed cost, and the optimistic guess gets the device tried at that size); one
    below every timed bucket, in proportion for both. So a large batch is judged by
    large batches. With a line fitted through all batches, an H200 run kept triangle
    batches of 4,096 on the host at half the device's speed (the route's decisions
    were not logged; a steep slope from small, noisy device batches would do it).
    """

    def __init__(self, fixed: bool = False) -> None:
        self.fixed = fixed
        self.buckets: dict[int, list[float]] = {}      # bucket -> [mean size, mean seconds]

    @property
    def known(self) -> bool:
        return bool(self.buckets)

    def add(self, size: int, seconds: float) -> None:
        key = int(size).bit_length()
        hit = self.buckets.get(key)
        if hit is None:
            self.buckets[key] = [float(size), float(seconds)]
        else:
            hit[0] = DECAY * hit[0] + (1.0 - DECAY) * size
            hit[1] = DECAY * hit[1] + (1.0 - DECAY) * seconds

    def predict(self, size: int) -> float:
        key = int(size).bit_length()
        x = float(size)
        hit = self.buckets.get(key)
        if hit is not None:
            return hit[1] * x / hit[0]
        lo = max((k for k in self.buckets if k < key), default=None)
        hi = min((k for k in self.buckets if k > key), default=None)
        if lo is not None and hi is not None:
            (s0, t0), (s1, t1) = self.buckets[lo], self.buckets[hi]
            return t0 + (t1 - t0) * (x - s0) / (s1 - s0)
        if lo is not None:
            s0, t0 = self.buckets[lo]
            return t0 if self.fixed else t0 * x / s0
        s1, t1 = self.buckets[hi]   # type: ignore[index]
        return t1 * x / s1


class DeviceRoute:
    """The per-batch choice between the sequential path and the device (module
    docstring), from each path's time for batches of each size.

    Examples
    --------
    >>> r = DeviceRoute()
    >>> r.device_first(1), r.device_first(4096)       # nothing timed yet
    (False, True)
    >>> r.timed("sequential", 1, 50e-6); r.timed("device", 4096, 20e-3)
    >>> r.timed("device", 8, 2e-3)
    >>> r.device_first(1), r.device_first(4096)
    (False, True)
    """

    def __init__(self) -> None:
        self.cost = {"sequential": _Cost(), "device": _Cost(fixed=True)}
        self.batches = {"sequential": 0, "device": 0}
        self._skipped = 0

    def timed(self, path: str, size: int, seconds: float) -> None:
        """Record ``path``'s wall time for a batch of ``size`` updates."""
        if size > 0:
            self.cost[path].add(size, seconds)
            self.batches[path] += 1

    def predict(self, path: str, size: int) -> float | None:
        """``path``'s predicted seconds for ``size`` updates (``None``: never timed)."""
        c = self.cost[path]
        return c.predict(size) if c.known else None

    def device_first(self, size: int) -> bool:
        """Whether a batch of ``size`` updates should go to the device."""
        seq, dev = self.predict("sequential", size), self.predict("device", size)
        if seq is None:
            # its first batch is a small one: its time per update can be milliseconds
            # (a 4-cycle at a hub), and a large untimed batch would pay that many times
            return size >= FIRST_DEVICE_SIZE
        if dev is None:
            return seq > FIRST_DEVICE_S
        to_device = dev < seq
        slow, fast = (seq, dev) if to_device else (dev, seq)
        if slow <= RETRY * fast:
            self._skipped += 1
            if self._skipped >= REPROBE:    # the other path once: its time may have changed
                self._skipped = 0
                return not to_device
        return to_device
