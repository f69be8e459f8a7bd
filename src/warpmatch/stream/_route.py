"""Which path counts a batch when the batch path runs on a GPU: the host's sequential
path or the device.

Map: :class:`DeviceRoute` (the choice, :meth:`~DeviceRoute.device_first`; the timings,
:meth:`~DeviceRoute.timed`) < :class:`_Cost` (one path's time per batch as a line
``c0 + c1 * size``, fitted to its recent batches).

A GPU batch has a fixed cost that a handful of updates cannot repay: the overlay,
the candidate masks and the task list built on the host, copies both ways, several
launches and a synchronisation (2.4 ms for a batch of 2.8 triangle updates on a
10^7-edge R-MAT graph, an H200 host). The sequential path
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
#: weight of the older batches in each path's fit, per batch
DECAY = 0.8
#: every this many batches the predicted slower path is taken once again, if it is
#: predicted at most RETRY times slower (a cold first timing must not rule it out)
REPROBE = 32
RETRY = 4.0


class _Cost:
    """Seconds per batch of ``size`` updates, ``c0 + c1 * size``: a least-squares
    line through the recent batches (exponentially weighted), both terms >= 0.

    While every batch timed had one size ``b`` (time ``t``) the split between the
    terms is unknown: ``fixed=False`` takes the line through the origin
    (``t * size / b``: the sequential path, whose work is per update), ``fixed=True``
    the cheapest line through the point, ``t * min(1, size / b)`` (the device: its
    fixed cost is most of a small batch, and an optimistic guess gets it tried at
    another size, which fits the line)."""

    def __init__(self, fixed: bool = False) -> None:
        self.fixed = fixed
        self.w = self.sb = self.sbb = self.st = self.sbt = 0.0

    @property
    def known(self) -> bool:
        return self.w > 0.0

    def add(self, size: int, seconds: float) -> None:
        b, t = float(size), float(seconds)
        self.w = DECAY * self.w + 1.0
        self.sb = DECAY * self.sb + b
        self.sbb = DECAY * self.sbb + b * b
        self.st = DECAY * self.st + t
        self.sbt = DECAY * self.sbt + b * t

    def predict(self, size: int) -> float:
        mb, mt = self.sb / self.w, self.st / self.w
        var = self.sbb / self.w - mb * mb
        if var <= 1e-9 * max(mb * mb, 1.0):     # one size so far (see the class)
            share = float(size) / max(mb, 1.0)
            return mt * (min(1.0, share) if self.fixed else share)
        c1 = (self.sbt / self.w - mb * mt) / var
        c0 = mt - c1 * mb
        if c1 < 0.0:                    # larger batches measured faster: noise; the mean
            c0, c1 = mt, 0.0
        elif c0 < 0.0:                  # no fixed cost seen: proportional
            c0, c1 = 0.0, mt / max(mb, 1.0)
        return c0 + c1 * float(size)


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
