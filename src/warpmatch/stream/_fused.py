"""``apply_batches(..., counts_only=True)`` on the sequential CPU path: several batches per run.

Map: :func:`fused_batches` (the generator: runs of whole batches, yielded one by one)
< :func:`_deltas` (each batch's delta, from what the run computed once) and
:class:`Pending` (what a run applied beyond the batches yielded so far;
:meth:`Pending.settle` takes it back with
:meth:`~warpmatch.stream.sequential.SequentialPath.undo`).

The sequential path (:mod:`warpmatch.stream.sequential`) counts updates one at a time,
so how a stream is cut into batches changes nothing but the fixed cost of each call:
about 50 µs of Python and kernel entry a batch, warm (a 2-core box), and two to three
times that for the first calls after the matcher was built (code not in the caches:
hprd's 5,250-update stream in batches of 4,096, 0.40 ms against 0.25 ms with the same
code just run). Here the batches of about :data:`FUSE_S` of estimated work go to one
:meth:`~warpmatch.stream.sequential.SequentialPath.run`, and each is yielded with its
own delta, exactly as the batch-by-batch loop yields it.

Nothing of a batch not yet yielded is visible: a consumer that stops early (``break``,
an exception, the generator closed) or calls the matcher between two batches (any
``apply``, :attr:`~warpmatch.stream.matcher.ContinuousMatcher.graph`) first has the
run's unyielded batches taken back (:meth:`Pending.settle`, the kernel's undo), and the
generator goes on from there batch by batch. A run the path cannot finish (an invalid
update under ``on_invalid="error"``, an overflow, a new vertex: it applied nothing)
is done again batch by batch, so that errors name the same batch and update; a run
the path left early (several threads, a heavy rest) keeps its whole batches and gives
the rest back to the batch-by-batch loop.

Not in RapidFlow (Sun et al., VLDB 2022), which reads a whole stream in one loop and
has no batches to yield.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from .matcher import StreamDelta
from .types import Updates

__all__ = ["fused_batches", "Pending", "FUSE_S"]

#: estimated sequential work (seconds) of one fused run: its fixed cost of tens of µs
#: is then a few percent, and a consumer waits at most about this long for a batch
FUSE_S = 2e-3


class Pending:
    """The batches of one fused run applied but not yet yielded: ``res``'s updates
    ``at..done-1`` (indices in the run's ``chunk``)."""

    def __init__(self, seq: Any, res: Any, at: int) -> None:
        self.seq = seq
        self.res = res
        self.at = at
        self.settled = False

    def settle(self) -> None:
        """Take back the updates ``at..done-1`` (idempotent). Valid only before the
        path's next run, which reuses the arrays the record points into: every call
        that can run it settles first (:meth:`ContinuousMatcher._settle`)."""
        if not self.settled:
            self.settled = True
            self.seq.undo(self.res, self.at)


def _sums(x: np.ndarray, keep: int, starts: range, total: int, whole: bool) -> list[int]:
    """Per batch sums of the counts ``x[:keep]`` (batches at ``starts``); ``total`` is the
    run's sum over all it did (``whole``: that is ``x[:keep]``). Counts are never negative,
    so a run without a match needs no pass over them (hprd's streams mostly)."""
    if total == 0:
        return [0] * len(starts)
    if whole and len(starts) == 1:
        return [total]
    return np.add.reduceat(x[:keep], np.asarray(starts, dtype=np.int64)).tolist()


def _deltas(cm: Any, res: Any, ups: Updates, pos: int, keep: int, batch: int
            ) -> Iterator[tuple[int, Any]]:
    """``(hi, delta)`` of each batch of a run's first ``keep`` updates (``ups[pos:]``),
    counted in ``cm`` as it is produced. What every batch needs is computed once per
    run: a yielded batch costs a few µs, not the tens a numpy call each would add up to
    at batches of 64."""
    all_valid = res.valid == res.done     # (then no reasons to look up)
    starts = range(0, keep, batch)
    valid = res.code[:keep] == 0
    added = _sums(res.plus, keep, starts, res.added, keep == res.done)
    removed = _sums(res.minus, keep, starts, res.removed, keep == res.done)
    names = cm.query.names
    for j, lo in enumerate(starts):
        hi = min(keep, lo + batch)
        part = ups.slice(pos + lo, pos + hi)
        reasons = None if all_valid else res.reasons(part, lo)
        cm.added += added[j]
        cm.removed += removed[j]
        cm.updates_applied += hi - lo
        yield hi, StreamDelta._counts(res.plus[lo:hi], res.minus[lo:hi], added[j],
                                      removed[j], valid[lo:hi], reasons, part, list(names))


def fused_batches(cm: Any, seq: Any, ups: Updates, batch: int) -> Iterator[Any]:
    """``cm.apply_batches(ups, batch, counts_only=True)`` with runs of several batches.

    Parameters
    ----------
    cm : ContinuousMatcher
    seq : SequentialPath
        ``cm``'s sequential path.
    ups : Updates
        The stream (no vertex declarations: those go batch by batch).
    batch : int
        Updates per yielded batch (>= 1).

    Yields
    ------
    StreamDelta
        One per batch, as :meth:`ContinuousMatcher.apply` returns it.
    """
    n = len(ups)
    pos = 0
    while pos < n:
        threads = cm.engine.threads_used()
        rate = seq.rate
        # rate unknown: two batches, the run stopping after the first once FUSE_S is spent
        k = 2 if rate is None else int(FUSE_S / max(rate * batch, 1e-12))
        if k < 2 or pos + batch >= n or seq.prefers_batch(batch, threads):
            one = ups.slice(pos, min(n, pos + batch))   # (the last batch, a heavy one)
            pos += len(one)
            yield cm.apply(one, True)
            continue
        end = min(n, pos + k * batch)
        chunk = ups.slice(pos, end)
        cm._settle()                    # (another generator's run: before this one)
        try:
            res = seq.run(chunk, cm.on_invalid, threads, None, stop_after=FUSE_S,
                          min_done=batch)
        except OverflowError:           # (nothing applied) which batch: batch by batch
            res = None
        keep = 0
        if res is not None:
            keep = res.done if res.done == len(chunk) else res.done - res.done % batch
            if keep < res.done:
                # left early (several threads, a heavy rest): its whole batches stay, the
                # rest goes batch by batch (and may use the batch path's threads)
                seq.undo(res, keep)
        if keep:
            pending = Pending(seq, res, 0)
            cm._pending = pending
            try:
                for hi, d in _deltas(cm, res, ups, pos, keep, batch):
                    pending.at = hi
                    if hi == keep:
                        cm._pending = None  # nothing of the run left to take back
                    yield d
                    if pending.settled and hi < keep:
                        keep = hi       # a call in between took the rest back
                        break
            finally:
                if cm._pending is pending:  # stopped early: the unyielded batches go back
                    cm._pending = None
                    pending.settle()
            pos += keep
            if keep == len(chunk):
                continue
        # what the run did not keep, batch by batch: nothing applied (an invalid update
        # under on_invalid="error", an overflow, a new vertex), so that an error names
        # the batch and update it names without fusing; or the path left it
        while pos < end:
            one = ups.slice(pos, min(end, pos + batch))
            pos += len(one)
            yield cm.apply(one, True)
