"""Continuous matching on a Dask cluster: a replica of the dynamic graph on every worker.

What is where
-------------
- :class:`DistributedMatcher` — the client side, with the surface of
  :class:`~warpmatch.stream.matcher.ContinuousMatcher` (``apply``,
  ``apply_batches``, ``count``, ``graph``, ...): each batch goes to every replica,
  the shares' per-update deltas come back and are merged in arrival order;
- :class:`_Replica` — a Dask actor, one per worker: a
  :class:`~warpmatch.stream.matcher.ContinuousMatcher` of its own that applies
  every update of every batch and searches only its share
  (:meth:`~warpmatch.stream.matcher.ContinuousMatcher.apply_share`), with the
  best delta engine the worker has;
- :func:`shares` — which updates of a batch each replica searches.

Exactness: an update's deltas depend only on the states just before and after
it (DESIGN.md, "Continuous matching"); every replica holds every state, and
each update is searched by exactly one replica, so the summed counts and the
gathered rows are one process's.

How it differs from the literature and from the static path:

- DCSM (§1.3-1.5) pipelines one GPU; here the unit of parallelism is the update,
  dealt round-robin to the replicas (``i mod R``): consecutive updates of a
  stream often touch the same hubs, and dealing them out spreads such runs.
  Costs are not estimated per update.
- Replicas are Dask actors: Dask places them and carries the calls, but an
  actor is not rerun when its worker dies. A lost replica makes the matcher
  unusable with a :class:`~warpmatch.errors.DistributedError` naming the
  worker; the static path's shards, by contrast, are rerun elsewhere.
- Every replica receives every batch (the updates travel once per worker per
  batch); a batch's searches, not its transfer, must dominate for this to pay.
"""
from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from ..errors import DistributedError, InputFormatError, UnknownLabelWarning
from ..graph import Graph
from ..query.model import Query
from ..stream.batching import BatchedApply
from .cluster import check_workers, require, worker_threads
from .graphs import ship_graph, worker_graph

__all__ = ["DistributedMatcher", "shares"]


def shares(size: int, replicas: int) -> list[np.ndarray]:
    """Bool masks, one per replica: replica ``r`` searches updates ``i`` with
    ``i % replicas == r`` of a batch of ``size``."""
    i = np.arange(int(size))
    return [i % replicas == r for r in range(replicas)]


class _Replica:
    """One worker's replica (a Dask actor); see the module docstring."""

    def __init__(self, graph_handle: Any, query: Query, mode: str, induced: bool,
                 backend: str, on_invalid: str, options: dict) -> None:
        from ..stream.matcher import ContinuousMatcher
        g = worker_graph(graph_handle)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnknownLabelWarning)   # the client warned
            self.cm = ContinuousMatcher(g, query, mode=mode, induced=induced,
                                        backend=backend, on_invalid=on_invalid,
                                        count_initial=False, **options)

    def info(self) -> dict:
        from distributed import get_worker
        return {"worker": get_worker().address, "backend": self.cm.backend}

    def apply(self, updates: Any, search: np.ndarray, counts_only: bool) -> dict:
        t = time.perf_counter()
        d = self.cm.apply_share(updates, search, counts_only)
        return {"plus_counts": d.plus_counts, "minus_counts": d.minus_counts,
                "plus": d.plus, "minus": d.minus, "plus_update": d.plus_update,
                "minus_update": d.minus_update, "valid": d.valid, "reasons": d.reasons,
                "seconds": time.perf_counter() - t}

    def snapshot(self) -> Graph:
        return self.cm.graph.snapshot()


class DistributedMatcher(BatchedApply):
    """:class:`~warpmatch.stream.matcher.ContinuousMatcher` on a Dask cluster.

    Made by ``warpmatch.ContinuousMatcher(..., client=client)``; the parameters
    are that class's, and the results (counts, rows, their order, the errors)
    are the same as one process's.

    Parameters
    ----------
    graph : Graph
        ``G_0`` (a graph read from a ``.wmg`` file reaches the workers as its
        path; any other is written to a temporary one, or scattered).
    query : Query
    client : distributed.Client
    mode, induced, backend, on_invalid, count_initial, progress, **engine_options
        As for :class:`~warpmatch.stream.matcher.ContinuousMatcher`; ``backend``
        is each worker's (``"auto"``: the GPU where the worker has one). The
        initial count runs on the cluster as static shards.

    Attributes
    ----------
    replicas : int
        Workers holding a replica (every worker of the cluster when made).
    backend : str
        ``"dask:"`` and the replicas' engines, e.g. ``"dask:cpu"``.
    stats : dict
        ``workers``, ``replicas`` and, after each batch, ``replica_seconds``
        (each replica's seconds for it).

    Notes
    -----
    Workers that join the cluster later hold no replica. A replica lost with
    its worker is not rebuilt: the matcher then raises
    :class:`~warpmatch.errors.DistributedError`, naming the worker.
    """

    def __init__(self, graph: Graph, query: Query, client: Any, mode: str = "embeddings",
                 induced: bool = False, backend: str = "auto", on_invalid: str = "error",
                 count_initial: bool = True, progress: Any = False,
                 **engine_options: Any) -> None:
        if on_invalid not in ("error", "skip"):
            raise ValueError(f"on_invalid must be 'error' or 'skip', not {on_invalid!r}")
        from ..stream.matcher import check_backend
        check_backend(backend)      # (whether it runs is each worker's question)
        require()
        self.client = client
        self.query = query
        self.mode = mode
        self.induced = bool(induced)
        self.on_invalid = on_invalid
        self.added = 0
        self.removed = 0
        self.updates_applied = 0
        self._broken: str | None = None
        try:
            facts = check_workers(client)
            threads = worker_threads(facts)
            handle = ship_graph(client, graph)
            futs = []
            for w in sorted(facts):
                opts = dict(engine_options)
                if backend == "cpu" or (backend == "auto" and not facts[w].get("gpus")):
                    opts.setdefault("threads", threads.get(w, 1))
                futs.append(client.submit(_Replica, handle, query, mode, bool(induced),
                                          backend, on_invalid, opts, workers=[w],
                                          allow_other_workers=False, actor=True, pure=False))
            self._actors = [f.result() for f in futs]
            self._futures = futs          # an actor lives while its future is held
            infos = [a.info().result() for a in self._actors]
        except BaseException:
            self.close()
            raise
        self._workers = [i["worker"] for i in infos]
        self.replicas = len(self._actors)
        self.backend = "dask:" + "+".join(sorted({i["backend"] for i in infos}))
        self.stats: dict[str, Any] = {"workers": len(facts), "replicas": self.replicas}
        self.initial_count: int | None = None
        if count_initial:
            self.initial_count = self._count_g0(graph, backend, progress)

    def _count_g0(self, graph: Graph, backend: str, progress: Any) -> int:
        from ..plan import build_plan
        from .static import count_plan, prepare
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnknownLabelWarning)
            plan = build_plan(graph, self.query, mode=self.mode, induced=self.induced,
                              purpose="count")
        if plan.empty_reason is not None:
            return 0
        job = prepare(self.client, graph, plan,
                      backend="cpu" if backend == "cpu" else "auto")
        try:
            cb = progress if callable(progress) else None
            raw, _ = count_plan(job, progress=cb)
        finally:
            job.close()
        return int(raw) * int(plan.multiplier)

    # ------------------------------------------------------------------ state
    @property
    def count(self) -> int | None:
        """The live total: ``initial_count + added - removed`` (``None`` if not counted)."""
        if self.initial_count is None:
            return None
        return self.initial_count + self.added - self.removed

    @property
    def graph(self) -> Graph:
        """The current graph, as a static :class:`~warpmatch.Graph` copied from a replica
        (the replicas hold the dynamic graph; this is a snapshot, not a live view)."""
        self._usable()
        return self._call(lambda i, a: a.snapshot(), self._actors[:1])[0]

    def _usable(self) -> None:
        if self._broken is not None:
            raise DistributedError(f"this distributed matcher can no longer be used: "
                                   f"{self._broken}")

    def _call(self, method: Any, actors: list) -> list:
        futs = [method(i, a) for i, a in enumerate(actors)]
        out, errors = [], []
        for w, f in zip(self._workers, futs):
            try:
                out.append(f.result())
            except InputFormatError as exc:
                errors.append((w, exc))
            except Exception as exc:  # noqa: BLE001 - a worker lost or failing
                self._broken = f"the replica on worker {w} failed: {type(exc).__name__}: {exc}"
                raise DistributedError(self._broken) from exc
        if errors:
            if len(errors) == len(futs):       # every replica refused the batch, unchanged
                raise errors[0][1]
            self._broken = (f"the replicas disagree on a batch: {errors[0][0]} refused it "
                            f"({errors[0][1]})")
            raise DistributedError(self._broken)
        return out

    # ------------------------------------------------------------------ apply
    def apply(self, updates: Any, counts_only: bool = False) -> Any:
        """Apply one batch on every replica; return its per-update deltas.

        As :meth:`warpmatch.stream.matcher.ContinuousMatcher.apply`.

        Raises
        ------
        InputFormatError
            As one process would (every replica refuses the batch, and none
            changes).
        DistributedError
            A replica's worker died or failed (the matcher is unusable after).
        """
        from ..stream.matcher import StreamDelta
        from ..stream.updates import as_updates
        self._usable()
        ups = as_updates(updates)
        B = len(ups)
        masks = shares(B, self.replicas)
        parts = self._call(lambda i, a: a.apply(ups, masks[i], counts_only), self._actors)
        plus_c = np.sum([p["plus_counts"] for p in parts], axis=0, dtype=np.int64)
        minus_c = np.sum([p["minus_counts"] for p in parts], axis=0, dtype=np.int64)
        if B == 0:
            plus_c = minus_c = np.zeros(0, np.int64)
        plus = minus = plus_u = minus_u = None
        if not counts_only:
            plus, plus_u = _merge([p["plus"] for p in parts], [p["plus_update"] for p in parts])
            minus, minus_u = _merge([p["minus"] for p in parts],
                                    [p["minus_update"] for p in parts])
        added, removed = int(plus_c.sum()), int(minus_c.sum())
        self.added += added
        self.removed += removed
        self.updates_applied += B
        self.stats["replica_seconds"] = {w: round(p["seconds"], 6)
                                         for w, p in zip(self._workers, parts)}
        return StreamDelta(plus_c, minus_c, added, removed, plus, minus, plus_u, minus_u,
                           np.asarray(parts[0]["valid"], dtype=bool), list(parts[0]["reasons"]),
                           ups, list(self.query.names))

    # ------------------------------------------------------------------ end
    def close(self) -> None:
        """Release the replicas (the workers drop them)."""
        for f in getattr(self, "_futures", []):
            try:
                f.release()
            except Exception:  # noqa: BLE001 - the cluster may be gone already
                pass
        self._futures, self._actors = [], []
        if self._broken is None:
            self._broken = "it was closed"

    def __enter__(self) -> "DistributedMatcher":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        live = "?" if self.count is None else f"{self.count:,}"
        return (f"<DistributedMatcher {self.query.name!r} ({self.mode}, "
                f"{'induced' if self.induced else 'non-induced'}, {self.replicas} replicas, "
                f"backend {self.backend}): {live} matches after {self.updates_applied} "
                f"updates>")


def _merge(rows: list, upd: list) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the shares in update order (a stable sort: one share holds all the rows of
    an update, in its engine's order)."""
    r = [np.asarray(x) for x in rows if x is not None]
    u = [np.asarray(x, dtype=np.int64) for x in upd if x is not None]
    allr = np.concatenate(r) if r else np.zeros((0, 0), np.int64)
    allu = np.concatenate(u) if u else np.zeros(0, np.int64)
    order = np.argsort(allu, kind="stable")
    return allr[order], allu[order]

