"""Batches that close on size or on time (DCSM §1.3's first requirement, issue 17 item 1).

What is where
-------------
- :func:`timed_batches` — the core: a reader thread takes pieces (parsed chunks,
  or single updates) from a producer as they come; the caller's thread cuts
  them into batches of ``batch_size`` updates, or hands on a shorter batch as
  soon as its oldest update has waited ``max_latency`` seconds;
- :func:`concat_updates` — one :class:`~warpmatch.stream.types.Updates` of
  several, in order (the last piece's vertex declarations, which hold all
  declarations so far);
- :func:`item_batches` — the same for an iterable of update tuples and
  ``("v", id, label)`` declarations;
- :class:`BatchedApply` — ``apply_batches`` and ``apply_stream`` for any matcher
  with an ``apply(batch, counts_only)`` (the one-process and the distributed one);
- :func:`stream_batches` — whatever
  :meth:`~warpmatch.stream.matcher.ContinuousMatcher.apply_stream` is given, in
  batches; :func:`parse_duration` — ``"1ms"`` and the like.

A slow producer's updates are thus handed on about ``max_latency`` after they
arrive, whatever ``batch_size``; a fast one still fills whole batches. The
batches never change the results: per-update deltas do not depend on how a
stream is cut (DESIGN.md).

Back-pressure (issue 17, item 3): the reader thread holds at most twice
``batch_size`` updates (:data:`PENDING_MIN` at least) that were not handed on,
counted in updates, not in pieces (:class:`_Pending`). When matching falls
behind, a fast producer waits there, and the next batch takes everything that
waited, up to ``batch_size``: batches grow to full size instead of a queue
growing. (A queue of 64 pieces did this before; a producer of single updates,
e.g. ``item_batches``, then got batches of 64 updates at saturation whatever
``batch_size``.)

How it differs from DCSM: DCSM's host thread closes batches as the GPU
pipeline asks for them; here a batch closes on size or time only, and the
next batch is matched after the previous one (no pipelining yet: the
multi-version store of issue 17 is what would let batches overlap).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from .convert import as_updates
from .latency import LatencyStats
from .types import Updates
from .updates import arrived_whole, split_batches

__all__ = ["timed_batches", "concat_updates", "item_batches", "stream_batches",
           "parse_duration", "BatchedApply"]

_END = object()


def parse_duration(text: str | float) -> float:
    """Seconds in ``text``: a number (seconds) or with a unit ``us``, ``ms``, ``s``.

    Raises
    ------
    ValueError
        Not a non-negative duration.

    Examples
    --------
    >>> parse_duration("1ms"), parse_duration("250us"), parse_duration("0.5")
    (0.001, 0.00025, 0.5)
    """
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        s = str(text).strip().lower()
        scale = 1.0
        for unit, f in (("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)):
            if s.endswith(unit):
                s, scale = s[:-len(unit)].strip(), f
                break
        try:
            value = float(s) * scale
        except ValueError:
            raise ValueError(f"not a duration: {text!r} (write e.g. 1ms, 250us, 0.5s)") from None
    if not value >= 0:
        raise ValueError(f"a duration must be >= 0, not {text!r}")
    return value


def concat_updates(parts: list[Updates]) -> Updates:
    """The updates of ``parts`` in order, as one :class:`Updates`.

    Optional columns (labels, times, line numbers) are kept where every part
    has them; the vertex declarations are the last part's (a reader's pieces
    each carry every declaration read so far).
    """
    if len(parts) == 1:
        return parts[0]
    last = parts[-1]

    def cat(name: str) -> np.ndarray | None:
        cols = [getattr(p, name) for p in parts]
        if any(c is None for c in cols):
            return None
        return np.concatenate(cols)
    return Updates(np.concatenate([p.src for p in parts]), np.concatenate([p.dst for p in parts]),
                   np.concatenate([p.op for p in parts]), cat("label"), cat("time"),
                   cat("line"), last.source, last.new_vertex_ids, last.new_vertex_labels)


#: fewest updates the reader thread may hold that were not handed on yet
#: (:class:`_Pending`; twice the batch size where that is more)
PENDING_MIN = 1024


class _Pending:
    """Pieces the reader thread has read and the batches have not taken yet, bounded by
    their *updates*, not by their number: a producer that yields one update at a time
    (``item_batches``) and one that yields parsed chunks are held back alike.

    ``put`` waits while the pieces held and the new one together would pass ``cap`` (a
    piece larger than ``cap`` goes in alone, once nothing else is held), so a producer
    faster than the matcher is blocked here (back-pressure) instead of a queue growing;
    ``take`` hands on everything held at once, so a batch closed after the matcher fell
    behind takes all that waited, up to a full batch.
    """

    def __init__(self, cap: int) -> None:
        self.cap = int(cap)
        self.cond = threading.Condition()
        self.items: deque = deque()    # (arrival time, piece, updates)
        self.count = 0                 # updates in ``items``

    def put(self, piece: Any, n: int, stop: threading.Event) -> bool:
        """Hold ``piece`` (``n`` updates) once there is room; False if the consumer
        stopped first."""
        with self.cond:
            while self.count > 0 and self.count + n > self.cap:
                if stop.is_set():
                    return False
                # a consumer that stopped early must not leave this thread waiting for good
                self.cond.wait(0.1)
            if stop.is_set():
                return False
            self.items.append((time.perf_counter(), piece, n))
            self.count += n
            self.cond.notify_all()
            return True

    def take(self, timeout: float | None) -> list:
        """Every piece held, waiting up to ``timeout`` seconds (``None``: for ever) for
        one; ``[]`` when none came in time."""
        with self.cond:
            if not self.items:
                self.cond.wait_for(lambda: bool(self.items), timeout)
            out = list(self.items)
            self.items.clear()
            self.count = 0
            self.cond.notify_all()
            return out


def _reader(source: Iterable[Any], size: Callable[[Any], int], pending: _Pending,
            stop: threading.Event) -> None:
    try:
        for piece in source:
            n = size(piece)
            if n and not pending.put(piece, n, stop):
                return
    except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
        pending.put(exc, 0, stop)
        return
    pending.put(_END, 0, stop)


def timed_batches(pieces: Iterable[Any], batch_size: int, max_latency: float | None,
                  size: Callable[[Any], int], combine: Callable[[list], Any],
                  cut: Callable[[Any, int, int], Any],
                  arrivals: Callable[[np.ndarray], None] | None = None) -> Iterator[Any]:
    """Cut a stream of pieces into batches that close on size or on time.

    Parameters
    ----------
    pieces : iterable
        Read in a thread of its own (so a producer that blocks does not block
        the batches already due). An exception it raises is raised here,
        after the updates before it.
    batch_size : int
        Updates per full batch.
    max_latency : float or None
        Seconds the oldest update of a batch may wait for the batch to fill;
        ``None``: batches close on size only (and at the end).
    size, combine, cut
        ``size(piece)`` updates in a piece; ``combine(pieces)`` one batch of
        several; ``cut(batch, lo, hi)`` its updates ``lo..hi-1``.
    arrivals : callable, optional
        Called with each batch's arrival times (``time.perf_counter()`` when
        the reader thread got each update's piece, one float per update) just
        before the batch is yielded, in the caller's thread
        (:class:`~warpmatch.stream.latency.LatencyStats` measures from them).

    Yields
    ------
    Any
        Batches of at most ``batch_size`` updates, in order; none is empty.
        While the caller is busy with one batch, the reader goes on reading
        up to ``max(2 * batch_size, PENDING_MIN)`` updates ahead and then
        blocks the producer; the next batch takes all of them, to a full batch.
    """
    if int(batch_size) < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    pending = _Pending(max(2 * int(batch_size), PENDING_MIN))
    stop = threading.Event()
    th = threading.Thread(target=_reader, args=(pieces, size, pending, stop), daemon=True,
                          name="warpmatch-batches")
    th.start()
    held: list = []            # pieces not handed on yet
    times: list = []           # their updates' arrival times (with ``arrivals``)
    count = 0                  # their updates
    marks: list = []           # (updates held up to and with a piece, its arrival time)

    def arrived() -> np.ndarray:
        return times[0] if len(times) == 1 else np.concatenate(times)

    try:
        while True:
            timeout = None
            if held and max_latency is not None:
                # marks[0]: the piece of the oldest update held
                timeout = max(0.0, marks[0][1] + max_latency - time.perf_counter())
            got = pending.take(timeout)
            if not got:                      # the oldest update has waited long enough
                if arrivals is not None:
                    arrivals(arrived())
                yield combine(held)
                held, times, marks, count = [], [], [], 0
                continue
            end: Any = None
            for t, piece, n in got:
                if piece is _END or isinstance(piece, BaseException):
                    end = piece
                    break
                held.append(piece)
                if arrivals is not None:
                    times.append(np.full(n, t))
                count += n
                marks.append((count, t))
            if count >= batch_size:
                whole = combine(held)
                at = arrived() if arrivals is not None else None
                lo = 0
                while count - lo >= batch_size:
                    if at is not None:
                        arrivals(at[lo:lo + batch_size])
                    yield cut(whole, lo, lo + batch_size)
                    lo += batch_size
                held = [cut(whole, lo, count)] if lo < count else []
                times = [at[lo:count]] if at is not None and lo < count else []
                marks = [(e - lo, t) for e, t in marks if e > lo]
                count -= lo
            if end is not None:
                if held:
                    if arrivals is not None:
                        arrivals(arrived())
                    yield combine(held)
                if isinstance(end, BaseException):
                    raise end
                return
    finally:
        stop.set()


def item_batches(items: Iterable[Any], batch_size: int, max_latency: float | None,
                 source: str = "<iterator>",
                 arrivals: Callable[[np.ndarray], None] | None = None) -> Iterator[Updates]:
    """:func:`timed_batches` of update tuples ``(u, v, op[, label])`` and ``("v", id, label)``
    declarations, as :func:`~warpmatch.stream.updates.as_updates` reads them; every batch
    carries the declarations seen so far (a declaration is not an update: it takes no
    place in a batch)."""
    seen: list = []

    def updates_only() -> Iterator[list]:      # runs in the reader thread
        for x in items:
            if _is_decl(x):
                seen.append(tuple(x))
            else:
                yield [x]

    def combine(parts: list) -> list:
        return [x for p in parts for x in p]

    for batch in timed_batches(updates_only(), batch_size, max_latency, len, combine,
                               lambda b, lo, hi: b[lo:hi], arrivals):
        yield as_updates(list(seen) + batch, source=source)


def _is_decl(x: Any) -> bool:
    return isinstance(x, (tuple, list)) and len(x) == 3 and isinstance(x[0], str) and \
        x[0].lower() == "v"


def stream_batches(updates: Any, batch_size: int, max_latency: float | None = None,
                   arrivals: Callable[[np.ndarray], None] | None = None
                   ) -> Iterator[Updates]:
    """Batches of ``updates``, whatever form they come in (see
    :meth:`~warpmatch.stream.matcher.ContinuousMatcher.apply_stream`).

    An :class:`Updates` (or anything :func:`~warpmatch.stream.updates.as_updates`
    takes whole: a mapping, a table, arrays) is cut into full batches; an
    iterable of :class:`Updates` pieces (what a reader yields) or of update
    tuples and ``("v", id, label)`` declarations is read as it comes, in
    batches that close on size or, with ``max_latency``, on time.
    ``arrivals`` is called with each batch's arrival times before it is
    yielded (:func:`timed_batches`); a stream given whole arrived at once,
    when this generator started.
    """
    import itertools

    if int(batch_size) < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    if max_latency is not None:
        max_latency = parse_duration(max_latency)
    if isinstance(updates, (Updates, dict, tuple, np.ndarray)) or hasattr(updates, "column_names"):
        yield from arrived_whole(split_batches(as_updates(updates), int(batch_size)),
                                 arrivals, time.perf_counter())
        return
    it = iter(updates)
    try:
        first = next(it)
    except StopIteration:
        return
    rest = itertools.chain([first], it)
    if isinstance(first, Updates):
        yield from timed_batches(rest, int(batch_size), max_latency, len, concat_updates,
                                 lambda u, lo, hi: u.slice(lo, hi), arrivals)
    else:
        yield from item_batches(rest, int(batch_size), max_latency, arrivals=arrivals)


class BatchedApply:
    """``apply_batches`` and ``apply_stream`` on top of a matcher's ``apply(updates,
    counts_only)``: one implementation for
    :class:`~warpmatch.stream.matcher.ContinuousMatcher` and the distributed matcher."""

    def apply(self, updates: Any, counts_only: bool = False) -> Any:  # pragma: no cover
        raise NotImplementedError

    @property
    def latency(self) -> LatencyStats:
        """Response time and latency of every update :meth:`apply_stream` has handled
        (from when it reached warpmatch to when its batch began, and to when its deltas
        were ready): p50, p99, max and mean, throughput and the busy fraction in
        ``latency.summary()``. Cumulative over calls; ``latency.clear()`` starts anew."""
        stats = self.__dict__.get("_latency")
        if stats is None:
            stats = self._latency = LatencyStats()
        return stats

    def apply_batches(self, updates: Any, batch_size: int,
                      counts_only: bool = False) -> Iterator[Any]:
        """Apply a stream in batches of ``batch_size`` updates, yielding each batch's deltas.

        Parameters
        ----------
        updates : Updates or any form :meth:`apply` accepts
        batch_size : int
            Updates per batch (the results do not depend on it).
        counts_only : bool, optional
            As in :meth:`apply`. The default is ``False``.

        Yields
        ------
        StreamDelta
            One per batch; update indices are within the batch.

        Notes
        -----
        With ``counts_only`` on the CPU engine's sequential path, consecutive
        batches are counted in one run and then yielded one by one
        (:mod:`warpmatch.stream._fused`): the deltas are the same, and what
        was not yielded yet is taken back before anything else reads or
        changes the matcher (stopping early included).
        """
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        ups = as_updates(updates)
        fused = self._fused_batches(ups, int(batch_size)) if counts_only else None
        if fused is not None:
            yield from fused
            return
        for batch in split_batches(ups, int(batch_size)):
            yield self.apply(batch, counts_only)

    def _fused_batches(self, ups: Updates, batch_size: int) -> Iterator[Any] | None:
        """Counts-only batches of ``ups`` yielded from runs of several (``None``: the
        matcher has no such runs; :class:`~warpmatch.stream.matcher.ContinuousMatcher`
        has, on its sequential path)."""
        return None

    def apply_stream(self, updates: Any, batch_size: int = 1024,
                     max_latency: float | str | None = None,
                     counts_only: bool = False) -> Iterator[Any]:
        """Apply updates as they come, in batches that close on size or on time.

        Parameters
        ----------
        updates : iterable
            Update tuples ``(u, v, op[, label])`` and ``("v", id, label)``
            declarations, or :class:`Updates` pieces (e.g. from
            :func:`~warpmatch.stream.updates.iter_update_batches`), from a
            producer that may block between them; or a whole :class:`Updates`
            (or any form :meth:`apply` takes), cut into full batches.
        batch_size : int, optional
            Updates per full batch. The default is 1024.
        max_latency : float or str, optional
            Seconds (or ``"1ms"``, ``"250us"``): a batch also closes when its
            oldest update has waited this long, so a slow producer's updates
            are matched about this long after they arrive. The default,
            ``None``, closes batches on size (and at the end) only.
        counts_only : bool, optional
            As in :meth:`apply`.

        Yields
        ------
        StreamDelta
            One per batch; the results do not depend on where batches close.
            Each batch's response time and latency go to :attr:`latency`.

        Examples
        --------
        >>> import warpmatch as wm
        >>> cm = wm.ContinuousMatcher(wm.Graph.from_edges([0, 1], [1, 2]), "triangle",
        ...                           backend="cpu")
        >>> [d.added for d in cm.apply_stream(iter([(0, 2, "+"), (2, 3, "+")]), 1)]
        [6, 0]
        """
        stats = self.latency
        due: list[np.ndarray] = []
        for batch in stream_batches(updates, batch_size, max_latency, due.append):
            yield stats.timed(lambda b: self.apply(b, counts_only), batch, due.pop())
