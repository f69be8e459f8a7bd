"""The counting paths of :class:`~warpmatch.stream.matcher.ContinuousMatcher`: which
path counts a batch, and the delta of a batch the sequential path ran.

Map: :class:`CountingPaths` (a mixin of the matcher):
:meth:`~CountingPaths._apply_sequential` (the CPU engine: the sequential path, with
several threads the batch path for the heavy rest of a batch,
:meth:`~CountingPaths._rest_of_batch`),
:meth:`~CountingPaths._apply_routed_device` (a GPU engine: the host's sequential path or
the device per batch, :mod:`._route`), :meth:`~CountingPaths._sequential_delta` (the
delta of a sequential run).

The paths themselves are :mod:`.sequential` (RapidFlow-style, one update at a time in
place) and the matcher's batch path (GCSM's overlay,
``ContinuousMatcher._apply_batch``); how they differ from the papers is said there.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..errors import InputFormatError
from ._result import StreamDelta
from .types import Updates

__all__ = ["CountingPaths"]


class _Retake(Exception):
    """A later part of a batch the sequential path began cannot be applied by it."""


class CountingPaths:
    """The matcher's choice of counting path per batch (module docstring); the matcher
    gives ``engine``, ``on_invalid``, ``query``, the counters and ``_batch``."""

    #: with a GPU engine: the choice of the sequential path or the device per batch
    _route: Any = None
    engine: Any
    on_invalid: str
    query: Any
    added: int
    removed: int
    updates_applied: int

    # ------------------------------------------------------ the two paths
    def _sequential_path(self) -> Any:
        """The sequential path for counting (:mod:`.sequential`: the CPU engine's, or a
        GPU engine's host engine's), or ``None``."""
        return getattr(self, "_seq", None)

    def _apply_sequential(self, seq: Any, ups: Updates, search: np.ndarray | None = None
                          ) -> StreamDelta:
        """Count a batch on the sequential path; what it leaves goes to the batch path.
        ``search``: as in :meth:`apply_share` (``None``: every update)."""
        B = len(ups)
        route = self._route
        if route is not None:
            return self._apply_routed_device(route, seq, ups, search)
        threads = self.engine.threads_used()
        res = None
        if not seq.prefers_batch(B, threads):
            res = seq.run(ups, self.on_invalid, threads, search)
        if res is None:                 # new vertices, malformed or invalid updates, ...
            t0 = time.perf_counter()
            out = self._batch(ups, True, search=search)
            seq.batch_timed(B, time.perf_counter() - t0)
            return out
        return self._sequential_delta(seq, ups, res, search)

    def _apply_routed_device(self, route: Any, seq: Any, ups: Updates,
                             search: np.ndarray | None) -> StreamDelta:
        """A counting batch with a GPU engine: on the device or on the host's sequential
        path (one thread), whichever :class:`~._route.DeviceRoute` predicts faster for its
        size; the wall time of either goes back to the route."""
        B = len(ups)
        t0 = time.perf_counter()
        res = None
        if not route.device_first(B):
            res = seq.run(ups, self.on_invalid, 1, search)
        if res is None:                 # (also new vertices, malformed or invalid updates)
            out = self._batch(ups, True, search=search)
            route.timed("device", B, time.perf_counter() - t0)
            return out
        out = self._sequential_delta(seq, ups, res, search)
        route.timed("sequential", B, time.perf_counter() - t0)
        return out

    def _sequential_delta(self, seq: Any, ups: Updates, res: Any, search: np.ndarray | None
                          ) -> StreamDelta:
        """The delta of a batch the sequential path ran (``res``), finishing the rest
        of it on the batch path if the path left some (several threads)."""
        B = len(ups)
        plus_c, minus_c = res.plus, res.minus
        valid = res.code == 0
        reasons = res.reasons(ups)
        if res.done < B:
            # several threads, and the rest of the batch is heavy: the batch path shares
            # its searches between them
            whole = self._rest_of_batch(seq, ups, res, search, plus_c, minus_c, valid,
                                        reasons)
            if whole is not None:       # taken back and given whole to the batch path
                return whole
            added, removed = int(plus_c.sum()), int(minus_c.sum())
        else:
            added, removed = res.added, res.removed     # the kernel's sums
        self.added += added
        self.removed += removed
        self.updates_applied += B
        return StreamDelta._counts(plus_c, minus_c, added, removed, valid, reasons, ups,
                                  list(self.query.names))

    def _rest_of_batch(self, seq: Any, ups: Updates, res: Any, search: np.ndarray | None,
                       plus: np.ndarray, minus: np.ndarray, valid: np.ndarray,
                       reasons: list[str]) -> StreamDelta | None:
        """Apply and count the updates the sequential path left (``res.done..B-1``),
        filling ``plus``, ``minus``, ``valid`` and ``reasons`` in place (``None``), or
        take the batch back and return the batch path's delta of all of it.

        The batch path takes the rest; before it was ever timed, only a trial
        slice of about :data:`~warpmatch.stream.sequential.PARALLEL_S` of
        sequential work (:meth:`~.sequential.SequentialPath.trial_size`), after
        which the rest goes to whichever path was faster per update. So a batch
        path slower than one thread costs one slice, not the rest of the batch.
        Each applied part keeps an undo record (the batch path's slice gets one
        from :meth:`~.sequential.SequentialPath.dry_run`): an invalid update
        under ``on_invalid="error"`` or an overflow in a later part leaves
        nothing of the batch applied, and the error names the update in the
        whole batch (the batch path, given it all, raises it).
        """
        B = len(ups)
        threads = self.engine.threads_used()
        taken = [res]                   # what is applied, in order
        live = [0]                      # those whose arrays are still the path's own
        d = res.done

        def part(stop: int) -> tuple[Updates, np.ndarray | None]:
            return ups.slice(d, stop), None if search is None else search[d:stop]

        def own() -> None:
            # before the path runs again: it reuses the arrays of its last undo record
            for j in live:
                taken[j] = seq.detach(taken[j])
            live.clear()

        try:
            while d < B:
                k = seq.trial_size(B - d)
                sub, srch = part(B if k is None else d + k)
                rec = None
                if k is not None and k < B - d:
                    own()
                    rec = seq.dry_run(sub, self.on_invalid)
                    if rec is None:     # an update the sequential path cannot apply
                        raise _Retake
                t0 = time.perf_counter()
                tail = self._batch(sub, True, account=False, search=srch)
                seq.batch_timed(len(sub), time.perf_counter() - t0)
                stop = d + len(sub)
                plus[d:stop], minus[d:stop] = tail.plus_counts, tail.minus_counts
                valid[d:stop] = tail.valid
                reasons[d:stop] = tail.reasons
                d = stop
                if rec is not None:
                    taken.append(rec)
                if d < B and not seq.batch_faster():
                    sub, srch = part(B)
                    own()
                    r = seq.run(sub, self.on_invalid, threads, srch)
                    if r is None:
                        raise _Retake
                    stop = d + r.done
                    plus[d:stop], minus[d:stop] = r.plus[:r.done], r.minus[:r.done]
                    valid[d:stop] = r.code[:r.done] == 0
                    reasons[d:stop] = r.reasons(sub)[:r.done]
                    taken.append(r)
                    live.append(len(taken) - 1)
                    d = stop
        except (InputFormatError, OverflowError, _Retake) as err:
            # nothing of the batch may stay applied; an invalid update is reported by the
            # batch path over the whole batch, so that the error names its place in it
            for rec in reversed(taken):
                seq.undo(rec)
            if isinstance(err, OverflowError):
                raise
            return self._batch(ups, True, search=search)
        return None
