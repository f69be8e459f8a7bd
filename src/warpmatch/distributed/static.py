"""Static matching on a Dask cluster: a plan's shards as tasks, results merged exactly.

What is where
-------------
- :func:`count_plan` — the raw count: one task per shard, summed as they finish
  (progress in shards, early stop on a limit or a deadline);
- :func:`match_plan` — the matches, a shard's rows at a time, as shards finish;
- :func:`write_dataset` — listing into a Parquet dataset: every shard writes
  ``part-NNNNN.parquet`` on its worker, atomically (temporary file, then
  rename), so a shard that Dask runs again after its worker died replaces its
  file and a retry never duplicates rows; the directory itself appears only
  when every shard is written (``DIR.partial-*`` until then);
- ``_count_task``/``_match_task``/``_write_task`` — what runs on a worker:
  the graph from its handle (:mod:`.graphs`), the shard's plan
  (:func:`.shards.shard_plan`), the best engine the worker has, numba threads
  shared fairly among the workers of a host.

The plan is built once, on the client, and scattered to every worker once; a
task carries only its shard (two integers, or a heavy root's depth-1 slice).

How it differs from the literature: PBE's and STMatch's multi-GPU runs split
work statically; here Dask balances shards by work stealing and reruns the
shards of a lost worker, and exactness comes from the shards partitioning the
search tree (:mod:`.shards`), not from collecting and deduplicating rows.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..errors import DistributedError
from ..graph import Graph
from ..plan import Plan
from .cluster import check_workers, require, worker_threads
from .graphs import sent_as, ship_graph, ship_object, worker_graph, worker_object
from .shards import SHARDS_PER_WORKER, Shard, cost_exponent, make_shards, shard_plan

__all__ = ["Job", "prepare", "count_plan", "match_plan", "write_dataset", "describe"]

Progress = Callable[[int, int], None]


@dataclass
class Job:
    """A plan ready to run on a cluster: its shards, and the futures every task names."""
    client: Any
    plan: Plan
    shards: list[Shard]
    graph: Any                      # GraphFile or Future of the scattered Graph
    plan_ref: Any                   # PickleFile or Future of the scattered plan
    backend: str
    threads: dict[str, int]
    workers: int
    stats: dict = field(default_factory=dict)
    spill: str | None = None        # the run's temporary directory (removed by close())

    def close(self) -> None:
        """Remove the run's temporary files (also done when the job is garbage-collected)."""
        if self.spill is not None:
            shutil.rmtree(self.spill, ignore_errors=True)
            self.spill = None


def prepare(client: Any, graph: Graph, plan: Plan, backend: str = "auto",
            shards: int | None = None, graph_path: str | os.PathLike | None = None) -> Job:
    """Check the workers, cut the plan into shards, send graph and plan once.

    Parameters
    ----------
    client : distributed.Client
    graph : Graph
    plan : Plan
    backend : str, optional
        The engine each worker runs: ``"auto"`` (the default) is the best the
        worker has (GPU if present, else CPU).
    shards : int, optional
        Shards wanted. The default is :data:`.shards.SHARDS_PER_WORKER` per worker.
    graph_path : str or os.PathLike, optional
        The ``.wmg`` file the graph was read from (workers map it themselves).
    """
    import weakref
    require()
    t0 = time.perf_counter()
    facts = check_workers(client)
    n = len(facts)
    parts = make_shards(graph, plan, int(shards) if shards else SHARDS_PER_WORKER * n)
    spill = tempfile.mkdtemp(prefix="warpmatch-dask-") if parts else None
    try:
        handle = ship_graph(client, graph, graph_path) if parts else None
        plan_ref = ship_object(client, plan, spill, "plan") if parts else None
    except BaseException:
        if spill is not None:
            shutil.rmtree(spill, ignore_errors=True)
        raise
    sent = "none" if handle is None else sent_as(graph, handle)
    job = Job(client, plan, parts, handle, plan_ref, backend, worker_threads(facts), n,
              {"workers": n, "shards": len(parts), "graph_sent": sent,
               "prepare_seconds": round(time.perf_counter() - t0, 6)}, spill)
    if spill is not None:
        weakref.finalize(job, shutil.rmtree, spill, True)
    return job


def describe(client: Any, graph: Graph, plan: Plan, shards: int | None = None) -> str:
    """How a cluster would run ``plan`` (for ``explain``): its workers, and the shards'
    number and estimated costs. Nothing runs but the workers' check.

    Returns
    -------
    str
        A few lines, for people.
    """
    require()
    facts = check_workers(client)
    n = len(facts)
    want = int(shards) if shards else SHARDS_PER_WORKER * n
    parts = make_shards(graph, plan, want)
    gpus = sum(1 for f in facts.values() if f.get("gpus"))
    lines = [f"Dask cluster {client.scheduler.address}: {n} worker{'s' * (n != 1)}"
             f" ({gpus} with a GPU; each runs the best engine it has)"]
    if not parts:
        lines.append("shards: none (the plan has no roots)")
        return "\n".join(lines)
    cost = np.array([p.cost for p in parts])
    split = sum(1 for p in parts if p.depth1 is not None)
    lines.append(f"shards: {len(parts)} ({want} asked for; {split} of them slices of heavy "
                 f"roots split at depth 1), by estimated "
                 f"cost (1 + degree)^{cost_exponent(plan)} of their roots")
    lines.append(f"estimated cost per shard: min {cost.min():.3g}, median "
                 f"{float(np.median(cost)):.3g}, max {cost.max():.3g} (the largest is "
                 f"{cost.max() / cost.sum():.1%} of the whole; Dask's work stealing evens "
                 f"out the rest)")
    return "\n".join(lines)


# ------------------------------------------------------------------ worker side
def _engine_and_plan(graph_handle: Any, plan: Plan, shard: Shard, backend: str,
                     threads: dict[str, int]) -> tuple[Any, Graph, Plan, int]:
    from distributed import get_worker
    from ..engine import resolve_backend
    me = get_worker().address
    g = worker_graph(graph_handle)
    plan = worker_object(plan)
    try:
        engine = resolve_backend(backend)
    except Exception as exc:  # noqa: BLE001 - named with the worker
        raise DistributedError(f"worker {me}: backend {backend!r}: {exc}") from exc
    if plan.cut_part is not None:
        # an inter-partition search (distributed.partitioned): on a GPU the whole graph
        # stays in host memory (zero-copy) where it does not fit the device's budget
        from ..partition.search import _inter_engine
        engine = _inter_engine(engine, g)
    return engine, g, shard_plan(plan, shard), int(threads.get(me, 1))


@contextlib.contextmanager
def _with_threads(n: int) -> Iterator[None]:
    """numba's thread count for a task: ``n``, within what numba may start."""
    import numba
    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n, int(numba.config.NUMBA_NUM_THREADS))))
    try:
        yield
    finally:
        numba.set_num_threads(old)


#: an engine's own statistics that a shard reports back (where the engine keeps them)
_ENGINE_STATS = ("compile_s", "bfs_s", "search_s", "pool_size", "pool_depth", "launches")


def _count_task(graph_handle: Any, plan: Plan, shard: Shard, backend: str,
                threads: dict[str, int]) -> tuple[int, int, float, str, str, dict]:
    from distributed import get_worker
    t0 = time.perf_counter()
    engine, g, p, t = _engine_and_plan(graph_handle, plan, shard, backend, threads)
    t1 = time.perf_counter()
    with _with_threads(t):
        raw = int(engine.count(g, p))
    t2 = time.perf_counter()
    es = getattr(engine, "last_stats", None) or {}
    stats = {"setup_s": round(t1 - t0, 6), "count_s": round(t2 - t1, 6),
             **{k: es[k] for k in _ENGINE_STATS if k in es}}
    return shard.index, raw, t2 - t1, get_worker().address, engine.name, stats


def _match_task(graph_handle: Any, plan: Plan, shard: Shard, backend: str,
                threads: dict[str, int], limit: int | None) -> tuple[int, np.ndarray]:
    engine, g, p, t = _engine_and_plan(graph_handle, plan, shard, backend, threads)
    with _with_threads(t):
        rows = [np.asarray(b) for b in engine.match(g, p, limit=limit)]
    out = np.concatenate(rows) if rows else np.zeros((0, p.k), np.int64)
    return shard.index, g.to_external(p.to_query_order(out)).astype(np.int64, copy=False)


def _write_task(graph_handle: Any, plan: Plan, shard: Shard, backend: str,
                threads: dict[str, int], directory: str, names: Sequence[str],
                batch_size: int) -> tuple[int, int]:
    from .._writers import ParquetMatchWriter, atomic_path
    engine, g, p, t = _engine_and_plan(graph_handle, plan, shard, backend, threads)
    target = Path(directory) / f"part-{shard.index:05d}.parquet"
    with _with_threads(t), atomic_path(target) as tmp:
        w = ParquetMatchWriter(tmp, names)
        try:
            for b in engine.match(g, p, batch_size=batch_size):
                if len(b):
                    w.write(g.to_external(p.to_query_order(np.asarray(b)))
                            .astype(np.int64, copy=False))
        finally:
            w.close()
    return shard.index, int(w.rows)


# ------------------------------------------------------------------ client side
def _submit(job: Job, fn: Callable, *extra: Any) -> list[Any]:
    # the costliest shards first (Dask runs a worker's tasks in the order given): a heavy
    # shard started last would finish alone, after every other worker went idle
    order = sorted(job.shards, key=lambda s: -s.cost)
    return [job.client.submit(fn, job.graph, job.plan_ref, s, job.backend, job.threads,
                              *extra, key=f"warpmatch-{fn.__name__[1:]}-{s.index}-"
                              f"{os.urandom(6).hex()}", pure=False, retries=2,
                              priority=len(order) - i)
            for i, s in enumerate(order)]


def _cancel(client: Any, futures: list[Any]) -> None:
    try:
        client.cancel([f for f in futures if not f.done()])
    except Exception:  # noqa: BLE001 - cancelling is best effort once we have the answer
        pass


def count_plan(job: Job, progress: Progress | None = None,
               stop: Callable[[int], bool] | None = None,
               deadline: float | None = None) -> tuple[int, bool]:
    """The plan's raw count (not multiplied), summed over its shards.

    Parameters
    ----------
    job : Job
    progress : callable, optional
        ``progress(shards done, shards)`` as shards finish.
    stop : callable, optional
        ``stop(raw so far)`` after each shard; ``True`` cancels the rest.
    deadline : float, optional
        A ``time.perf_counter()`` value: the shards not finished by then are
        cancelled (their counts are missing from a lower bound).

    Returns
    -------
    (int, bool)
        The count and whether every shard was counted (``False``: stopped, a
        lower bound). ``job.stats`` gets the seconds each worker counted and
        the engines that ran, and ``shard_stats``: per shard (in shard order)
        its worker, roots, estimated cost, raw count, seconds of setup (graph,
        plan) and of counting, and what the engine reports of its own run.
    """
    distributed = require()
    total = len(job.shards)
    if progress is not None:
        progress(0, total)
    if not total:
        return 0, True
    futures = _submit(job, _count_task)
    raw, done = 0, 0
    per_worker: dict[str, float] = {}
    engines: set[str] = set()
    detail: dict[int, dict] = {}
    timeout = None if deadline is None else max(0.0, deadline - time.perf_counter())
    try:
        for fut in distributed.as_completed(futures, timeout=timeout):
            i, c, secs, who, eng, st = fut.result()
            s = job.shards[i]
            detail[i] = {"worker": who, "roots": s.roots, "split": s.depth1 is not None,
                         "cost": s.cost, "raw": c, **st}
            raw += c
            done += 1
            per_worker[who] = per_worker.get(who, 0.0) + secs
            engines.add(eng)
            if progress is not None:
                progress(done, total)
            if stop is not None and done < total and stop(raw):
                break
    except TimeoutError:            # (distributed.TimeoutError is this class)
        pass                            # the deadline: what finished is a lower bound
    finally:
        _cancel(job.client, futures)
    job.stats["worker_seconds"] = {w: round(s, 6) for w, s in sorted(per_worker.items())}
    job.stats["engines"] = sorted(engines)
    job.stats["shard_stats"] = [detail[i] for i in sorted(detail)]
    return raw, done == total


def match_plan(job: Job, limit: int | None = None,
               progress: Progress | None = None) -> Iterator[np.ndarray]:
    """The plan's matches (query-vertex order, external ids), one array per shard, as
    shards finish; at most ``limit`` rows in all (the rest are cancelled)."""
    distributed = require()
    total = len(job.shards)
    if progress is not None:
        progress(0, total)
    if not total or limit == 0:
        return
    futures = _submit(job, _match_task, limit)
    left = None if limit is None else int(limit)
    done = 0
    try:
        for fut in distributed.as_completed(futures):
            _, rows = fut.result()
            done += 1
            if progress is not None:
                progress(done, total)
            if left is not None:
                rows = rows[:left]
                left -= len(rows)
            if len(rows):
                yield rows
            if left == 0:
                break
    finally:
        _cancel(job.client, futures)
        job.close()


def write_dataset(job: Job, directory: str | os.PathLike, names: Sequence[str],
                  batch_size: int = 1 << 16, progress: Progress | None = None) -> int:
    """List the plan's matches into a Parquet dataset ``directory``; return the rows.

    The workers write ``part-NNNNN.parquet`` (one per shard, int64 columns
    ``names``, external ids) into ``DIR.partial-*`` beside ``directory``, which is
    renamed to ``directory`` once every shard is written; on an error or an
    interrupt it is removed and ``directory`` is not created. Workers must see
    the client's file system there.

    Raises
    ------
    FileExistsError
        ``directory`` exists and is not empty.
    """
    distributed = require()
    final = Path(directory).absolute()
    if final.exists() and (not final.is_dir() or any(final.iterdir())):
        raise FileExistsError(f"{os.fspath(directory)!r} exists and is not an empty "
                              "directory: a dataset is written to a new directory")
    if not final.parent.is_dir():
        raise FileNotFoundError(f"output directory {os.fspath(final.parent)!r} does not "
                                "exist")
    tmp = Path(tempfile.mkdtemp(prefix=final.name + ".partial-", dir=final.parent))
    total = len(job.shards)
    rows = 0
    futures: list[Any] = []
    try:
        if progress is not None:
            progress(0, total)
        futures = _submit(job, _write_task, os.fspath(tmp), list(names), int(batch_size))
        for done, fut in enumerate(distributed.as_completed(futures), 1):
            rows += fut.result()[1]
            if progress is not None:
                progress(done, total)
        if not total:            # no shard: an empty dataset still has its schema
            from .._writers import ParquetMatchWriter, atomic_path
            with atomic_path(tmp / "part-00000.parquet") as t:
                ParquetMatchWriter(t, names).close()
        for f in tmp.iterdir():  # the temporary file of a write cut by a worker's death
            if not (f.name.startswith("part-") and f.suffix == ".parquet"):
                f.unlink()
        if final.exists():
            final.rmdir()
        os.replace(tmp, final)
        os.chmod(final, 0o777 & ~_umask())
    except BaseException:
        _cancel(job.client, futures)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return rows


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m
