"""Static matching on a Dask cluster: a plan's shards as tasks, results merged exactly.

What is where
-------------
- :func:`count_jobs` / :func:`count_plan` — raw counts: one task per shard, summed
  as they finish (progress in shards, early stop on a limit or a deadline); the
  shards of several jobs (a partitioned search's parts and inter-partition
  searches, :mod:`.partitioned`) are all in flight at once;
- :func:`match_jobs` / :func:`match_plan` — the matches, a shard's rows at a time,
  as shards finish (a job's :class:`Output` says how its rows become the
  answer's: external ids, automorphism images);
- :func:`write_dataset` — listing into a Parquet dataset: every shard writes
  ``part-[JJJ-]NNNNN.parquet`` on its worker, atomically (temporary file, then
  rename), so a shard that Dask runs again after its worker died replaces its
  file and a retry never duplicates rows; the directory itself appears only
  when every shard is written (``DIR.partial-*`` until then);
- ``_count_task``/``_match_task``/``_write_task`` — what runs on a worker:
  the graph from its handle (:mod:`.graphs`), the shard's plan
  (:func:`.shards.shard_plan`), the best engine the worker has (a GPU engine set
  for short searches, ``_shard_engine``), numba threads shared fairly among the
  workers of a host.

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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..errors import DistributedError
from ..graph import Graph
from ..plan import Plan
from .cluster import check_workers, require, worker_threads
from .graphs import sent_as, ship_graph, ship_object, worker_graph, worker_object
from .shards import Shard, cost_exponent, default_shards, make_shards, shard_plan

__all__ = ["Job", "Output", "prepare", "count_jobs", "count_plan", "match_jobs", "match_plan",
           "write_dataset", "describe"]

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Output:
    """How a job's rows (query order, its graph's internal ids) become the answer's rows.

    ``ids``: an int64 array mapping the job's graph's internal ids to the answer's
    external ids (a part's subgraph has local ids; :func:`prepare` ships it once, as
    it ships the plan), or ``None`` for the job graph's own external ids; ``perms``: automorphisms
    (``|Aut| x k``) whose images each row stands for (a shared inter-partition
    search), or ``None``; ``prefix``: its dataset files' prefix (unique per job).
    """
    ids: Any = None
    perms: np.ndarray | None = None
    prefix: str = ""


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
    out: Output = field(default_factory=Output)
    # the graph object itself, kept alive while the job is: a graph spilled to a temporary
    # file (graphs._spilled) loses the file with the object, and a listing's generator may
    # outlive the caller's reference (an in-memory partition's part subgraphs)
    source: Any = field(default=None, repr=False)

    def close(self) -> None:
        """Remove the run's temporary files (also done when the job is garbage-collected)."""
        if self.spill is not None:
            shutil.rmtree(self.spill, ignore_errors=True)
            self.spill = None


def prepare(client: Any, graph: Graph, plan: Plan, backend: str = "auto",
            shards: int | None = None, graph_path: str | os.PathLike | None = None,
            out: Output | None = None) -> Job:
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
        Shards wanted. The default is :func:`.shards.default_shards` (8 per worker,
        at least 32).
    graph_path : str or os.PathLike, optional
        The ``.wmg`` file the graph was read from (workers map it themselves).
    out : Output, optional
        How listed rows become the answer's (the default: the graph's external ids).
    """
    import weakref
    require()
    t0 = time.perf_counter()
    facts = check_workers(client)
    n = len(facts)
    parts = make_shards(graph, plan, int(shards) if shards else default_shards(n))
    spill = tempfile.mkdtemp(prefix="warpmatch-dask-") if parts else None
    try:
        handle = ship_graph(client, graph, graph_path) if parts else None
        plan_ref = ship_object(client, plan, spill, "plan") if parts else None
        if parts and out is not None and isinstance(out.ids, np.ndarray):
            out = replace(out, ids=ship_object(client, out.ids, spill, "ids"))
    except BaseException:
        if spill is not None:
            shutil.rmtree(spill, ignore_errors=True)
        raise
    sent = "none" if handle is None else sent_as(graph, handle)
    job = Job(client, plan, parts, handle, plan_ref, backend, worker_threads(facts), n,
              {"workers": n, "shards": len(parts), "graph_sent": sent,
               "prepare_seconds": round(time.perf_counter() - t0, 6)}, spill,
              out if out is not None else Output(), graph)
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
    want = int(shards) if shards else default_shards(n)
    parts = make_shards(graph, plan, want)
    gpus = sum(1 for f in facts.values() if f.get("gpus"))
    lines = [f"Dask cluster {client.scheduler.address}: {n} worker{'s' * (n != 1)}"
             f" ({gpus} with a GPU; each runs the best engine it has)"]
    if not parts:
        lines.append("shards: none (the plan has no roots)")
        return "\n".join(lines)
    cost = np.array([p.cost for p in parts])
    split = sum(1 for p in parts if p.depth1 is not None)
    hubs = sum(1 for p in parts if p.add)
    lines.append(f"shards: {len(parts)} ({want} asked for; {split} of them slices of heavy "
                 f"roots split at depth 1, {hubs} groups of hubs run first), by estimated "
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
        engine = _inter_engine(engine, g, plans=[plan])
    engine = _shard_engine(engine)
    if engine.name == "gpu":
        # the worker keeps several graphs mapped (a partitioned run's parts and the whole
        # graph): their device copies go, oldest first, where this one would not fit
        from ..engine.gpu.memory import make_room
        make_room(g, getattr(engine, "graph_memory", "device"))
    return engine, g, shard_plan(plan, shard), int(threads.get(me, 1))


def _shard_engine(engine: Any) -> Any:
    """The engine a shard runs: a GPU engine whose DFS launches each take the rest of the
    pool (``launches="pool"``), so that a short shard is one launch, not a ramp of
    slices each ending with most of the GPU idle; any other engine as it is.

    Measured on an H200 (10^8-edge Chung-Lu graph, 34 shards one after another): the
    shards' GPU seconds fell from 8.70 to 7.78 (square), 10.19 to 8.52 and 8.27 to 6.76
    (STMatch's patterns 4 and 22). The engine given is not changed.
    """
    from ..partition.search import pool_launches
    return pool_launches(engine)


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
    start = time.time()
    t0 = time.perf_counter()
    engine, g, p, t = _engine_and_plan(graph_handle, plan, shard, backend, threads)
    t1 = time.perf_counter()
    with _with_threads(t):
        raw = int(engine.count(g, p))
    t2 = time.perf_counter()
    es = getattr(engine, "last_stats", None) or {}
    # wall-clock start and end (seconds since the epoch): a run's timeline, to see which
    # worker idled while which shard finished (comparable across workers of one host)
    stats = {"setup_s": round(t1 - t0, 6), "count_s": round(t2 - t1, 6),
             "start": round(start, 6), "end": round(start + (t2 - t0), 6),
             **{k: es[k] for k in _ENGINE_STATS if k in es}}
    return shard.index, raw, t2 - t1, get_worker().address, engine.name, stats


def _answer_rows(g: Graph, p: Plan, out: Output, batch: Any) -> np.ndarray:
    """A batch of the engine's rows as the answer's: query order, automorphism images,
    external ids."""
    rows = p.to_query_order(np.asarray(batch, dtype=np.int64))
    if out.perms is not None:
        from ..partition.plans import expand_rows
        rows = expand_rows(rows, out.perms)
    if out.ids is None:
        return g.to_external(rows).astype(np.int64, copy=False)
    return np.asarray(worker_object(out.ids), dtype=np.int64)[rows]


def _match_task(graph_handle: Any, plan: Plan, shard: Shard, backend: str,
                threads: dict[str, int], out: Output, limit: int | None
                ) -> tuple[int, np.ndarray]:
    engine, g, p, t = _engine_and_plan(graph_handle, plan, shard, backend, threads)
    if limit is not None and out.perms is not None:      # each raw row stands for |Aut|
        limit = -(-int(limit) // len(out.perms))
    with _with_threads(t):
        rows = [np.asarray(b) for b in engine.match(g, p, limit=limit)]
    raw = np.concatenate(rows) if rows else np.zeros((0, p.k), np.int64)
    return shard.index, _answer_rows(g, p, out, raw)


def _write_task(graph_handle: Any, plan: Plan, shard: Shard, backend: str,
                threads: dict[str, int], out: Output, directory: str, names: Sequence[str],
                batch_size: int) -> tuple[int, int]:
    from .._writers import ParquetMatchWriter, atomic_path
    engine, g, p, t = _engine_and_plan(graph_handle, plan, shard, backend, threads)
    target = Path(directory) / f"part-{out.prefix}{shard.index:05d}.parquet"
    fan = 1 if out.perms is None else len(out.perms)
    with _with_threads(t), atomic_path(target) as tmp:
        w = ParquetMatchWriter(tmp, names)
        try:
            for b in engine.match(g, p, batch_size=max(1, batch_size // fan)):
                if len(b):
                    w.write(_answer_rows(g, p, out, b))
        finally:
            w.close()
    return shard.index, int(w.rows)


# ------------------------------------------------------------------ client side
def _submit(jobs: Sequence[Job], fn: Callable, *extra: Any, out: bool = False
            ) -> tuple[list[Any], list[tuple[int, Shard]]]:
    """Every job's shards as tasks, all at once: ``(futures, (job, shard) per future)``.

    The jobs run in the order given (a worker finishing one job's last shards goes
    on to the next job's: no barrier between them), within a job the costliest
    shards first (Dask runs a worker's tasks by priority): a heavy shard started
    last would finish alone, after every other worker went idle.
    """
    order = [(j, s) for j, job in enumerate(jobs) for s in sorted(job.shards, key=_heavy_first)]
    tag = os.urandom(6).hex()
    futures = []
    for i, (j, s) in enumerate(order):
        job = jobs[j]
        args = (job.out, *extra) if out else extra
        futures.append(job.client.submit(
            fn, job.graph, job.plan_ref, s, job.backend, job.threads, *args,
            key=f"warpmatch-{fn.__name__[1:]}-{j}-{s.index}-{tag}", pure=False, retries=2,
            priority=len(order) - i))
    return futures, order


def _heavy_first(s: Shard) -> tuple[int, int, int]:
    """Sort key: groups of hubs first, then the costliest estimate first; among
    estimates within ~19% of each other (shards are cut to equal estimates, so most
    are), the shard of fewer roots first. Hubs, and fewer roots of the same estimate,
    are roots of higher degree, whose real cost the ``(1 + degree)^2`` estimate
    undercounts for larger queries: on a 10^8-edge power-law graph a 9-root shard of
    STMatch's pattern 22 took 1.5 s where the median shard took 0.03 s, and started
    late it finished alone."""
    return (0 if s.add and s.lo == s.hi else 1,
            -int(np.floor(4 * np.log2(max(s.cost, 1e-300)))), s.roots)


def _cancel(client: Any, futures: list[Any]) -> None:
    try:
        client.cancel([f for f in futures if not f.done()])
    except Exception:  # noqa: BLE001 - cancelling is best effort once we have the answer
        pass


def count_jobs(jobs: Sequence[Job], progress: Progress | None = None,
               stop: Callable[[list[int]], bool] | None = None,
               deadline: float | None = None) -> tuple[list[int], bool]:
    """Each job's raw count (not multiplied), every job's shards in flight at once.

    Parameters
    ----------
    jobs : sequence of Job
        On one client; run in this order where workers are short.
    progress : callable, optional
        ``progress(shards done, shards)`` as shards finish, over all jobs.
    stop : callable, optional
        ``stop(raw counts so far, per job)`` after each shard; ``True`` cancels the rest.
    deadline : float, optional
        A ``time.perf_counter()`` value: the shards not finished by then are
        cancelled (their counts are missing from a lower bound).

    Returns
    -------
    (list of int, bool)
        The counts and whether every shard was counted (``False``: stopped, a
        lower bound). Each ``job.stats`` gets the seconds each worker counted
        and the engines that ran, and ``shard_stats``: per shard (in shard
        order) its worker, roots, estimated cost, raw count, seconds of setup
        (graph, plan) and of counting, its wall-clock ``start`` and ``end`` (seconds
        since the epoch, on its worker's clock), and what the engine reports of its own
        run.
    """
    distributed = require()
    total = sum(len(job.shards) for job in jobs)
    raws = [0] * len(jobs)
    if progress is not None:
        progress(0, total)
    if not total:
        return raws, True
    futures, order = _submit(jobs, _count_task)
    where = {f.key: order[i][0] for i, f in enumerate(futures)}
    done = 0
    per_worker: list[dict[str, float]] = [{} for _ in jobs]
    engines: list[set[str]] = [set() for _ in jobs]
    detail: list[dict[int, dict]] = [{} for _ in jobs]
    timeout = None if deadline is None else max(0.0, deadline - time.perf_counter())
    try:
        for fut in distributed.as_completed(futures, timeout=timeout):
            i, c, secs, who, eng, st = fut.result()
            j = where[fut.key]
            s = jobs[j].shards[i]
            detail[j][i] = {"worker": who, "roots": s.roots, "split": s.depth1 is not None,
                            "cost": s.cost, "raw": c, **st}
            raws[j] += c
            done += 1
            per_worker[j][who] = per_worker[j].get(who, 0.0) + secs
            engines[j].add(eng)
            if progress is not None:
                progress(done, total)
            if stop is not None and done < total and stop(list(raws)):
                break
    except TimeoutError:            # (distributed.TimeoutError is this class)
        pass                            # the deadline: what finished is a lower bound
    finally:
        _cancel(jobs[0].client, futures)
    for j, job in enumerate(jobs):
        job.stats["worker_seconds"] = {w: round(s, 6) for w, s in sorted(per_worker[j].items())}
        job.stats["engines"] = sorted(engines[j])
        job.stats["shard_stats"] = [detail[j][i] for i in sorted(detail[j])]
    return raws, done == total


def count_plan(job: Job, progress: Progress | None = None,
               stop: Callable[[int], bool] | None = None,
               deadline: float | None = None) -> tuple[int, bool]:
    """The plan's raw count (not multiplied), summed over its shards: :func:`count_jobs`
    of one job (``stop(raw so far)``)."""
    raws, done = count_jobs([job], progress, None if stop is None else
                            (lambda r: stop(r[0])), deadline)
    return raws[0], done


def match_jobs(jobs: Sequence[Job], limit: int | None = None,
               progress: Progress | None = None, close: bool = True) -> Iterator[np.ndarray]:
    """The jobs' matches (query-vertex order, external ids, as each job's :class:`Output`
    says), one array per shard, as shards finish; at most ``limit`` rows in all (the
    rest are cancelled). Every job's shards are in flight at once; ``close`` closes
    the jobs at the end."""
    distributed = require()
    total = sum(len(job.shards) for job in jobs)
    if progress is not None:
        progress(0, total)
    if not total or limit == 0:
        if close:
            for job in jobs:
                job.close()
        return
    futures, _ = _submit(jobs, _match_task, limit, out=True)
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
        _cancel(jobs[0].client, futures)
        if close:
            for job in jobs:
                job.close()


def match_plan(job: Job, limit: int | None = None,
               progress: Progress | None = None) -> Iterator[np.ndarray]:
    """The plan's matches (query-vertex order, external ids), one array per shard, as
    shards finish; at most ``limit`` rows in all (the rest are cancelled)."""
    return match_jobs([job], limit, progress)


def write_dataset(job: Job | Sequence[Job], directory: str | os.PathLike,
                  names: Sequence[str], batch_size: int = 1 << 16,
                  progress: Progress | None = None) -> int:
    """List the plan's matches into a Parquet dataset ``directory``; return the rows.

    The workers write ``part-NNNNN.parquet`` (one per shard, int64 columns
    ``names``, external ids; with several jobs ``part-JJJ-NNNNN.parquet``) into
    ``DIR.partial-*`` beside ``directory``, which is renamed to ``directory``
    once every shard is written; on an error or an interrupt it is removed and
    ``directory`` is not created. Workers must see the client's file system there.

    Raises
    ------
    FileExistsError
        ``directory`` exists and is not empty.
    """
    distributed = require()
    jobs = [job] if isinstance(job, Job) else list(job)
    if len(jobs) > 1 and len({j.out.prefix for j in jobs}) < len(jobs):
        raise ValueError("write_dataset: jobs need distinct Output prefixes")
    final = Path(directory).absolute()
    if final.exists() and (not final.is_dir() or any(final.iterdir())):
        raise FileExistsError(f"{os.fspath(directory)!r} exists and is not an empty "
                              "directory: a dataset is written to a new directory")
    if not final.parent.is_dir():
        raise FileNotFoundError(f"output directory {os.fspath(final.parent)!r} does not "
                                "exist")
    tmp = Path(tempfile.mkdtemp(prefix=final.name + ".partial-", dir=final.parent))
    total = sum(len(j.shards) for j in jobs)
    rows = 0
    futures: list[Any] = []
    try:
        if progress is not None:
            progress(0, total)
        if total:
            futures, _ = _submit(jobs, _write_task, os.fspath(tmp), list(names),
                                 int(batch_size), out=True)
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
        if futures:
            _cancel(jobs[0].client, futures)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return rows


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m
