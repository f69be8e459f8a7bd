"""An order race: one count searched in two to four fixed matching orders and in random
ones at once, the first to reach the limit (or finish) answers (issue 23, item 2: a bad
order must not decide how soon a query's first matches come).

Map: :func:`can_race` (the engine interleaves: it has ``count_steps``) < :func:`count_race`
(the first plan alone for :data:`~warpmatch.plan.rival.RACE_AFTER` seconds, then its
rivals' kernel calls take turns with its own, :class:`_RestartCounts` among them: random
orders one after another) and :func:`match_race` (a listing: the rivals and
:class:`_RestartListings` join a search that has found nothing in that time, and the first
to find a match is the one listed); :func:`races_beside` < :func:`count_beside` (an engine that cannot interleave, the
GPU engine, counts the plan while the CPU engine races the plan's order and its rivals in a
thread beside it).
The rival plans and why several orders: :mod:`warpmatch.plan.rival`.

How it differs from a portfolio run in parallel processes:

- One process and one set of threads: the searches take turns of one kernel call (the
  engine's adaptive call length, about 0.1 s), each rival getting :data:`RIVAL_SHARE` of
  the first's time, so each has all the cores while it runs and none holds a second copy
  of the graph.
- Only the CPU engine interleaves (its search is resumable call by call,
  :meth:`~warpmatch.engine.cpu.CpuEngine.count_steps`). The GPU engine searches the plan's
  own order, and the CPU engine races that order and the rivals in a thread beside it
  (:func:`count_beside`): the host's cores are idle while the device searches. The one
  that answers first stops the other (the GPU engine at its next stop check, between or
  during its launches); the answer does not wait for a GPU search that is still
  compiling its module, which ends by itself in its own thread.
- With a limit (``--limit``) or a time limit, the count so far is the largest of the
  searches', a lower bound either way; they never add up (they count the same matches).
- A listing streams its rows as they come, so it cannot take them from two searches: the
  rivals join only a search that has listed nothing yet, and the first search to find a
  match is listed to the end, the others dropped.
"""
from __future__ import annotations

import copy
import dataclasses
import threading
import time
from typing import Any, Iterator

import numpy as np

from ..graph.csr import Graph
from ..plan.plan import Plan
from ..plan.rival import (RACE_AFTER, RESTART_GROWTH, RESTART_S, race_applies, random_plan,
                          rival_plans)
from .base import Progress, Stop

__all__ = ["can_race", "count_race", "match_race", "races_beside", "count_beside", "warm_racers",
           "RIVAL_SHARE", "BESIDE_AFTER"]

#: seconds the device's count runs alone before the CPU engine's searches start beside it
#: (:func:`count_beside`). Shorter than :data:`~warpmatch.plan.rival.RACE_AFTER`: there the
#: rivals take the first search's cores, here they take host cores the device's search
#: leaves idle. Measured on an H100 host with RACE_AFTER (0.2 s) as the head start (all
#: 3,600 shipped labeled queries, first 10^5 embeddings, session 37): the device answered
#: most yeast and hprd queries within 0.03 s (those never start the CPU searches at either
#: head start), while the CPU engine answered 1,003 of human's 1,200, a median 0.04 s after
#: its head start (the device's breadth-first start on human's large candidate sets is
#: slower), so human's median was 0.235 s. Shifting those answers by the shorter head start
#: projects human's median to 0.09 s; the device's answers can only come sooner or stay.
#: Not yet measured on a GPU at this value.
BESIDE_AFTER = 0.05
#: each rival's time over the first order's: RI's order is the better one more often (it
#: finished every full count of the shipped labeled queries that GraphQL's did, see
#: :mod:`warpmatch.plan.rival`), so a search RI's order wins pays about 1.5x its time after
#: the head start (2x with two rivals, 2.5x with three), one only a rival wins about 3x
#: (4x, 5x)
RIVAL_SHARE = 0.5


def can_race(engine: Any) -> bool:
    """Whether ``engine`` can interleave two searches (a ``count_steps`` generator and a
    ``match(..., yield_empty=True)``, as :class:`~warpmatch.engine.cpu.CpuEngine` has)."""
    return callable(getattr(engine, "count_steps", None))


def count_race(engine: Any, graph: Graph, plan: Plan, progress: Progress | None = None,
               stop: Stop | None = None, after: float | None = None) -> tuple[int, Plan]:
    """Raw count of ``plan`` in ``graph``, racing its rival orders once it has searched
    ``after`` seconds (:func:`warpmatch.plan.rival.rival_plans`, and where there are any,
    random orders one after another, :class:`_RestartCounts`; where there are none, the
    plain count).

    Parameters
    ----------
    engine : CpuEngine
        An engine with ``count_steps`` (:func:`can_race`).
    graph : Graph
    plan : Plan
        A whole count's plan (not a shard's or a part's: a rival starts from other roots).
    progress : callable, optional
        ``progress(done, total)``: the furthest of the searches, in the first plan's units.
    stop : callable, optional
        ``stop(raw_count_so_far)`` between calls (the largest count of the searches); True ends
        the race with that count, a lower bound.
    after : float, optional
        Seconds the first plan searches alone. The default, ``None``, is
        :data:`~warpmatch.plan.rival.RACE_AFTER` (this module's name for it, read at
        each call).

    Returns
    -------
    (int, Plan)
        The raw count and the plan that gave it. ``engine.last_stats`` describes that
        search, with ``"raced"`` (whether a rival ran) and ``"order"`` (the search's order).

    Examples
    --------
    >>> from warpmatch.engine.cpu import CpuEngine
    >>> from warpmatch.graph.csr import Graph
    >>> from warpmatch.plan import build_plan
    >>> from warpmatch.query.model import Query
    >>> g = Graph.from_edges([0, 1, 2, 2, 3], [1, 2, 0, 3, 0])
    >>> plan = build_plan(g, Query.from_edges([(0, 1), (1, 2), (2, 0)]))
    >>> raw, used = count_race(CpuEngine(), g, plan)
    >>> raw * used.multiplier
    12
    """
    if after is None:
        after = RACE_AFTER
    t0 = time.perf_counter()
    plans = [plan]
    runs = [engine.count_steps(graph, plan)]
    counts, fractions, spent = [0], [0.0], [0.0]
    rival_built = False
    unit = 1
    calls, i = 0, 0
    try:
        while True:
            t = time.perf_counter()
            try:
                total, done, work = next(runs[i])
            except StopIteration as end:
                stats = dict(getattr(engine, "last_stats", None) or {})
                if progress is not None:
                    progress(unit, unit)
                winner, raw = i, int(end.value)
                break
            spent[i] += time.perf_counter() - t
            counts[i] = total
            fractions[i] = done / work if work else 1.0
            if i == 0 and calls == 0:
                unit = max(1, int(work))
            if progress is not None:
                progress(int(max(fractions) * unit), unit)
            if stop is not None and calls and stop(max(counts)):
                winner = max(range(len(counts)), key=counts.__getitem__)
                raw = counts[winner]
                runs[winner].close()        # sets the engine's stats for that search
                stats = dict(getattr(engine, "last_stats", None) or {})
                break
            calls += 1
            if not rival_built and time.perf_counter() - t0 >= after:
                rival_built = True
                rivals = rival_plans(plan)
                for rival in rivals:
                    plans.append(rival)
                    runs.append(engine.count_steps(graph, rival))
                if rivals:          # where fixed orders race, random ones too
                    restarts = _RestartCounts(engine, graph, plan)
                    plans.append(restarts.plan)
                    runs.append(restarts)
                for _ in range(len(runs) - len(counts)):
                    counts.append(0)
                    fractions.append(0.0)
                    spent.append(0.0)
            # the search that is furthest below its share of the time goes next: a rival's
            # first calls are short (the engine's budget starts small), so turn by turn it
            # would catch up only after many of the first search's 0.1 s calls
            i = _turn(spent)
    finally:
        for r in runs:
            r.close()
    used = runs[winner].plan if isinstance(runs[winner], _Restarts) else plans[winner]
    # closing the others set the engine's stats too: the answer's search's are put back
    stats.update(raced=len(runs) > 1, order=used.order_name)
    restarted = [r.drawn for r in runs if isinstance(r, _Restarts)]
    if restarted:
        stats["random_orders"] = restarted[0]
    engine.last_stats = stats
    return raw, used


class _Restarts:
    """A search of a race that tries random orders one after another
    (:func:`~warpmatch.plan.rival.random_plan`, seeded, so a run is repeatable): an
    order that has found no match after :data:`~warpmatch.plan.rival.RESTART_S` seconds
    of its own search is dropped for the next, which gets
    :data:`~warpmatch.plan.rival.RESTART_GROWTH` times as long; one that has found a
    match keeps searching to the end. An iterator over the current order's steps (its
    ``StopIteration`` passes through: that order's search is over); :attr:`plan` is the
    current order's plan. :class:`_RestartCounts` and :class:`_RestartListings` say what
    a step is.
    """

    def __init__(self, engine: Any, graph: Graph, plan: Plan, seed: int = 0) -> None:
        self.engine, self.graph, self.base = engine, graph, plan
        self.rng = np.random.default_rng(seed)
        self.budget = RESTART_S
        self.drawn = 0
        self.found = False
        self._draw()

    def _start(self, plan: Plan) -> Iterator[Any]:
        raise NotImplementedError

    @staticmethod
    def _has_match(step: Any) -> bool:
        raise NotImplementedError

    def _draw(self) -> None:
        self.plan = random_plan(self.base, self.rng, self.drawn)
        self.drawn += 1
        self.run = self._start(self.plan)
        self.spent = 0.0

    def __iter__(self) -> "_Restarts":
        return self

    def __next__(self) -> Any:
        t = time.perf_counter()
        step = next(self.run)             # its StopIteration passes through
        self.spent += time.perf_counter() - t
        if not self.found:
            if self._has_match(step):
                self.found = True
            elif self.spent >= self.budget:
                self.run.close()
                self.budget *= RESTART_GROWTH
                self._draw()
        return step

    def close(self) -> None:
        self.run.close()


class _RestartCounts(_Restarts):
    """:class:`_Restarts` for :func:`count_race`: steps of ``engine.count_steps``
    (``StopIteration.value``: the count, once an order's search is over); the work
    fraction is reported as 0, since it restarts."""

    def _start(self, plan: Plan) -> Iterator[tuple[int, int, int]]:
        return self.engine.count_steps(self.graph, plan)

    @staticmethod
    def _has_match(step: tuple[int, int, int]) -> bool:
        return step[0] > 0

    def __next__(self) -> tuple[int, int, int]:
        return super().__next__()[0], 0, 1


class _RestartListings(_Restarts):
    """:class:`_Restarts` for :func:`match_race`: batches of ``engine.match`` with
    ``yield_empty`` (the end of an order's search without a match means there is none)."""

    def __init__(self, engine: Any, graph: Graph, plan: Plan, batch_size: int,
                 limit: int | None) -> None:
        self.batch_size, self.limit = batch_size, limit
        super().__init__(engine, graph, plan)

    def _start(self, plan: Plan) -> Iterator[Any]:
        return self.engine.match(self.graph, plan, batch_size=self.batch_size,
                                 limit=self.limit, yield_empty=True)

    @staticmethod
    def _has_match(step: Any) -> bool:
        return len(step) > 0


#: seconds :func:`count_beside` waits for the CPU searches to end once it has its answer
JOIN_S = 0.05


#: the index dtypes whose CPU searches beside a device search are warm in this process
_RACERS_WARM: set[str] = set()


def warm_racers(graph: Graph) -> float:
    """Compile (or load from numba's cache) what :func:`count_beside`'s CPU searches run,
    once per process and index dtype of ``graph``: a race of a labeled 6-vertex query on a
    small labeled graph. Returns the seconds spent (0.0 when already warm).

    Without it the first race of a process compiles the CPU engine's kernels in the thread
    beside the device's search (seconds on a fresh install; 43 s for int64 on a 2-core
    box), and the device's count beside it did not answer sooner either: on a fresh H100
    host the first process's first six yeast queries took 1.5-5.8 s and one 17.7 s, past
    their 1 s time limit; the next processes, which found the kernels in numba's cache, none
    over 0.34 s.
    """
    key = graph.indices.dtype.str
    if key in _RACERS_WARM:
        return 0.0
    t0 = time.perf_counter()
    from ..graph.generators import erdos_renyi, random_labels, with_labels
    from ..plan.build import build_plan
    from ..query.model import Query
    from .cpu import CpuEngine
    itype = graph.indices.dtype
    # skewed labels on a small random graph and a query whose rival orders differ from
    # RI's (GraphQL's starts at its rarest label), so that the race's turns run too
    g = with_labels(erdos_renyi(60, p=0.12, seed=1),
                    vertex_labels=random_labels(60, 3, "zipf", seed=1))
    if g.indices.dtype != itype:        # the kernels are compiled per index dtype
        g = dataclasses.replace(g, indices=g.indices.astype(itype))
    q = Query.parse("a:0-b:0, b:0-c:0, c:0-a:0, c:0-d:1, d:1-e:2, e:2-f:1")
    plan = build_plan(g, q, purpose="count", order="auto")
    count_race(CpuEngine(threads=1), g, plan, stop=lambda raw: False, after=0.0)
    _RACERS_WARM.add(key)
    return time.perf_counter() - t0


def races_beside(engine: Any) -> bool:
    """Whether a count on ``engine`` races its rivals on the CPU engine beside it
    (:func:`count_beside`): the GPU engine's, which cannot interleave searches."""
    return getattr(engine, "name", None) == "gpu" and not can_race(engine)


def count_beside(engine: Any, graph: Graph, plan: Plan, progress: Progress | None = None,
                 stop: Stop | None = None, after: float | None = None,
                 cpu: Any = None) -> tuple[int, Plan]:
    """Raw count of ``plan`` on ``engine`` (one that cannot interleave searches: the GPU
    engine), with a :func:`count_race` on the CPU engine in a thread beside it once it has
    counted ``after`` seconds (``plan`` in its own order and its rival orders, taking turns;
    only where :func:`~warpmatch.plan.rival.race_applies`); the first to finish, or to
    reach the limit ``stop`` sets, answers and stops the other.

    Parameters
    ----------
    engine : Engine
        Counts ``plan`` (in a thread of its own where the race applies, on a shallow copy
        of ``engine``), with ``progress`` and a ``stop`` that also ends it once the CPU
        engine has answered.
    graph : Graph
    plan : Plan
        A whole count's plan.
    progress : callable, optional
        Given to ``engine`` (the searches beside report none); not called once the
        count has returned.
    stop : callable, optional
        ``stop(raw_count_so_far)``, asked by both threads (with each search's own count):
        True ends that search with its count, a lower bound.
    after : float, optional
        Seconds before the searches beside start; ``None`` (the default) is
        :data:`BESIDE_AFTER`.
    cpu : CpuEngine, optional
        The engine of the searches beside. The default is a new
        :class:`~warpmatch.engine.cpu.CpuEngine` of one lane fewer than numba's threads,
        so that the thread driving ``engine`` keeps a core.

    Returns
    -------
    (int, Plan)
        The raw count and the plan that gave it: the larger count where both were cut
        (each a lower bound of the same number), the CPU engine's where it answered first.
        ``engine.last_stats`` is ``engine``'s own (as far as its search got), with
        ``"raced"`` (whether the CPU searches ran) and ``"order"``; ``"raced_on": "cpu"``
        where they answered, and ``"device_pending": True`` where ``engine``'s search had
        not ended by then.

    Notes
    -----
    The CPU searches are one :func:`count_race` (no head start: the rivals join after its
    first call), its ``stop`` also true once ``engine`` has answered; an exception in their
    thread ends only them. ``engine``'s search runs in a thread too, so that the answer
    comes as soon as either has one: the GPU engine cannot be stopped while it compiles
    a module (1-2 s for a query of a new size) or runs its breadth-first start, and it is
    then left to end by itself (at its next stop check: once its module is ready); the
    next GPU search waits for it (:data:`~warpmatch.engine.gpu.engine.SEARCH_LOCK`), the
    next race's CPU searches do not: they start at once where ``engine.busy()`` says the
    device is held. An exception of ``engine`` fails the count unless the CPU engine had answered.
    Once there is an answer, each other thread is waited for at most :data:`JOIN_S`: the
    CPU searches end by themselves at their next kernel call's return, and a box they fill
    after that is not read. The CPU engine's search in the plan's own order is there
    because the device's search starts breadth-first (an initial pool of partial matches,
    then warps below them) and may reach its first complete matches later than a
    depth-first search on the host. Counts are equal by construction
    (:func:`~warpmatch.plan.rival.rival_plans` keeps the candidate sets, restrictions and
    multiplier).
    """
    if after is None:
        after = BESIDE_AFTER
    by_rival = [False]
    done = threading.Event()          # set by the thread that answers, or at the end

    def first_stop(raw: int) -> bool:
        if done.is_set():
            by_rival[0] = True
            return True
        return stop is not None and bool(stop(raw))

    if not race_applies(plan):        # nothing to race: the engine alone, in this thread
        raw = int(engine.count(graph, plan, progress=progress, stop=stop))
        stats = dict(getattr(engine, "last_stats", None) or {})
        stats.update(raced=False, order=plan.order_name)
        engine.last_stats = stats
        return raw, plan
    busy = getattr(engine, "busy", None)
    if busy is not None and busy():
        # the device is held by a search left running by an earlier race (compiling):
        # the CPU engine starts at once instead of after its head start
        after = 0.0
    box: dict[str, Any] = {}          # the CPU engine's answer
    dev_box: dict[str, Any] = {}      # the engine's: "raw" or "exc"
    started = [False]
    returned = [False]

    def rivals() -> None:
        if done.wait(after):
            return
        try:
            started[0] = True
            if cpu is None:
                import numba

                from .cpu import CpuEngine
                # one core left to the thread that drives the device
                eng = CpuEngine(threads=max(1, numba.get_num_threads() - 1))
            else:
                eng = cpu
            why: list[str] = []

            def cpu_stop(raw: int) -> bool:
                if done.is_set():                # the device answered first
                    why.append("done")
                elif stop is not None and stop(raw):
                    why.append("stop")
                return bool(why)
            # the plan's own order too (from the first call, the rivals joining at once):
            # a depth-first search on the CPU reaches the first matches sooner than the
            # device's breadth-first start on many queries
            raw, used = count_race(eng, graph, plan, stop=cpu_stop, after=0.0)
            if why[-1:] != ["done"]:
                box.update(raw=int(raw), plan=used, cut=bool(why))
                done.set()
        except Exception:  # noqa: BLE001 - the CPU searches' failure must not fail the count
            return

    # a copy, so that a search left behind (still compiling) does not write the next
    # count's stats
    dev = copy.copy(engine)
    dev.last_stats = {}

    def shown(done_items: int, total: int) -> None:
        if not returned[0] and progress is not None:
            progress(done_items, total)

    def device() -> None:
        try:
            dev_box["raw"] = int(dev.count(graph, plan, progress=shown if progress else None,
                                           stop=first_stop))
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            dev_box["exc"] = exc
        finally:
            done.set()

    th = threading.Thread(target=rivals, daemon=True, name="warpmatch-rivals")
    dt = threading.Thread(target=device, daemon=True, name="warpmatch-device")
    th.start()
    dt.start()
    try:
        done.wait()
        dt.join(JOIN_S)               # a search past its first launch stops within ms
    finally:
        returned[0] = True
        done.set()
        # the CPU searches end at their next kernel call's return; not waited for longer
        # than JOIN_S: a process's first call loads the CPU engine's compiled kernels for
        # seconds (an H100 host: a 0.01 s GPU count returned after 4.6 s waiting for it)
        th.join(JOIN_S)
    stats = dict(dev.last_stats or {})
    pending = dt.is_alive()
    if "exc" in dev_box and not box:
        raise dev_box["exc"]
    if "raw" in dev_box and not (box and (int(box["raw"]) > dev_box["raw"] if box["cut"]
                                          else by_rival[0])):
        raw, used = dev_box["raw"], plan
    elif box:
        # the CPU engine's whole count answers where it stopped the device's search (or came
        # while the device was still busy); where it was cut too (a limit, a time limit),
        # the larger of two lower bounds
        raw, used = int(box["raw"]), box["plan"]
        stats["raced_on"] = "cpu"
    else:                             # (done is set only by an answer or a failure)
        raise RuntimeError("count_beside ended with no answer")
    stats.update(raced=started[0], order=used.order_name)
    if pending:
        stats["device_pending"] = True
    engine.last_stats = stats
    return raw, used


def _turn(spent: list[float]) -> int:
    """Which search goes next: the one furthest below its share of the time (the first
    search's share 1, each rival's :data:`RIVAL_SHARE`; the first on a tie)."""
    return min(range(len(spent)),
               key=lambda j: (spent[j] / (1.0 if j == 0 else RIVAL_SHARE), j))


def match_race(engine: Any, graph: Graph, plan: Plan, batch_size: int, limit: int | None,
               progress: Progress | None = None,
               after: float | None = None) -> Iterator[tuple[Plan, Any]]:
    """``plan``'s matches, batch by batch; where its search has listed nothing after ``after``
    seconds and is not over, its rivals (:func:`~warpmatch.plan.rival.rival_plans`, and
    random orders one after another, :class:`_RestartListings`) search in turns with it,
    and the first search to find a match is listed to the end.

    Parameters
    ----------
    engine : CpuEngine
        An engine :func:`can_race` accepts.
    graph : Graph
    plan : Plan
        A whole listing's plan.
    batch_size, limit
        As ``engine.match``'s.
    progress : callable, optional
        Given to the first search (the rivals report none).
    after : float, optional
        The first search's head start; ``None`` (the default) is
        :data:`~warpmatch.plan.rival.RACE_AFTER`.

    Yields
    ------
    (Plan, numpy.ndarray)
        The plan whose depth order the rows are in, and a non-empty batch of rows.
    """
    if after is None:
        after = RACE_AFTER
    t0 = time.perf_counter()
    runs = [engine.match(graph, plan, batch_size=batch_size, limit=limit, progress=progress,
                         yield_empty=True)]
    plans = [plan]
    try:
        for batch in runs[0]:
            if len(batch):
                yield plan, batch
                yield from ((plan, b) for b in runs[0] if len(b))
                return
            if time.perf_counter() - t0 >= after:
                break
        else:
            return                       # over, and no match at all
        rivals = rival_plans(plan)
        if not rivals:
            yield from ((plan, b) for b in runs[0] if len(b))
            return
        plans += rivals
        runs += [engine.match(graph, r, batch_size=batch_size, limit=limit, yield_empty=True)
                 for r in rivals]
        restarts = _RestartListings(engine, graph, plan, batch_size, limit)
        plans.append(restarts.plan)
        runs.append(restarts)
        spent = [time.perf_counter() - t0] + [0.0] * (len(runs) - 1)
        while True:
            i = _turn(spent)
            t = time.perf_counter()
            batch = next(runs[i], None)
            spent[i] += time.perf_counter() - t
            if batch is None:
                return                   # a search over without a match: there is none
            if len(batch):
                for j, r in enumerate(runs):
                    if j != i:
                        r.close()
                used = runs[i].plan if isinstance(runs[i], _Restarts) else plans[i]
                yield used, batch
                yield from ((used, b) for b in runs[i] if len(b))
                return
    finally:
        for r in runs:
            r.close()
