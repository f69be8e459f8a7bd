"""Clusters: Dask's, started or joined; what each worker can run.

What is where
-------------
- :func:`require` — import ``dask.distributed`` (and ``dask_cuda``), or a
  :class:`~warpmatch.errors.DistributedError` naming the extra to install;
- :func:`local_cluster` — a client of a new local cluster: ``workers`` processes
  on the CPU, or one worker per GPU through ``dask_cuda.LocalCUDACluster``;
- :func:`connect` — a client of a running scheduler (``tcp://host:port``);
- :func:`check_workers` — before any work: every worker imports warpmatch of the
  client's version, else an error naming the worker (not a hang later); a worker
  set already checked by this client is not asked again;
- :func:`worker_threads` — numba threads per task on each worker.

Dask does placement, retries, work stealing and the dashboard; nothing here
schedules.
"""
from __future__ import annotations

import os
from typing import Any

from ..errors import DistributedError

__all__ = ["require", "local_cluster", "connect", "check_workers", "worker_threads",
           "gpu_count"]


def require(cuda: bool = False) -> Any:
    """``distributed`` (the module), or an error that says which extra brings it."""
    try:
        import distributed
        # a directory named distributed on sys.path (tests/ has one) imports as an empty
        # namespace package where dask is missing: ask for a name only dask's package has
        from distributed import Client  # noqa: F401
    except ImportError as exc:
        raise DistributedError("distributed matching needs dask.distributed: "
                               "pip install 'warpmatch[dist]'" + f" ({exc})") from None
    if cuda:
        try:
            import dask_cuda  # noqa: F401
        except ImportError as exc:
            raise DistributedError("one worker per GPU needs dask-cuda: "
                                   "pip install 'warpmatch[dist-cuda]'" + f" ({exc})") from None
    return distributed


#: seconds to wait for a new local cluster's workers, or for a running cluster's first one
START_TIMEOUT = 120.0


def gpu_count() -> int:
    """GPUs this process can use (0 without CuPy or a device)."""
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no CuPy, no driver, no device: no GPU
        return 0


def local_cluster(workers: int | None = None, gpu: bool | None = None, **kwargs: Any) -> Any:
    """A :class:`distributed.Client` of a new cluster on this machine.

    Parameters
    ----------
    workers : int, optional
        Worker processes. The default is one per GPU with ``gpu``, else 2 or
        the number of cores, whichever is smaller.
    gpu : bool, optional
        One worker per GPU (``dask_cuda.LocalCUDACluster``). The default,
        ``None``, takes it where CuPy sees a device and dask-cuda is installed.
    **kwargs
        Passed to the cluster class. Its dashboard listens on a free port
        (``client.dashboard_link``) unless ``dashboard_address`` says otherwise.

    Returns
    -------
    distributed.Client
        Closing it (``client.close(); client.cluster.close()``, or a ``with``
        block on both) stops the cluster.

    Raises
    ------
    DistributedError
        Without ``warpmatch[dist]`` (or ``[dist-cuda]`` for ``gpu=True``).
    """
    from importlib import util
    distributed = require()
    if gpu is None:
        gpu = gpu_count() > 0 and util.find_spec("dask_cuda") is not None
    kwargs.setdefault("dashboard_address", ":0")
    if gpu:
        require(cuda=True)
        from dask_cuda import LocalCUDACluster
        if workers is not None:
            kwargs.setdefault("CUDA_VISIBLE_DEVICES", list(range(int(workers))))
        cluster = LocalCUDACluster(**kwargs)
    else:
        cores = os.cpu_count() or 1
        n = int(workers) if workers is not None else max(1, min(2, cores))
        if n < 1:
            raise DistributedError(f"workers must be at least 1, not {n}")
        kwargs.setdefault("threads_per_worker", 1)
        kwargs.setdefault("processes", True)
        cluster = distributed.LocalCluster(n_workers=n, **kwargs)
    client = distributed.Client(cluster)
    try:        # the workers register after the client exists (slowly on a cold machine)
        client.wait_for_workers(len(cluster.workers), timeout=START_TIMEOUT)
    except (TimeoutError, OSError) as exc:
        client.close()
        cluster.close()
        raise DistributedError(f"the local cluster's workers did not start within "
                               f"{START_TIMEOUT:g} s: {exc}") from None
    return client


def connect(address: str, timeout: float = 30.0) -> Any:
    """A client of the running scheduler at ``address`` (``tcp://host:port``).

    Raises
    ------
    DistributedError
        No scheduler answers there within ``timeout`` seconds.
    """
    distributed = require()
    try:
        return distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise DistributedError(f"no Dask scheduler answers at {address!r} within "
                               f"{timeout:g} s: {exc}") from None


def check_workers(client: Any) -> dict[str, dict]:
    """Every worker's facts; an error naming each worker that cannot run warpmatch.

    Returns
    -------
    dict
        ``{worker address: {"version", "nthreads", "gpus"}}``.

    Raises
    ------
    DistributedError
        No worker, a worker without warpmatch (or another version of it).
    """
    from importlib import util
    from .._version import __version__
    def workers() -> dict:
        return client.scheduler_info(n_workers=-1)["workers"] if _takes_n_workers(client) \
            else client.scheduler_info()["workers"]
    info = workers()
    if not info:                # a cluster that is still starting gets a little time
        try:
            client.wait_for_workers(1, timeout=min(START_TIMEOUT, 30.0))
        except (TimeoutError, OSError):
            pass
        info = workers()
    if not info:
        raise DistributedError(f"the Dask cluster at {client.scheduler.address} has no "
                               "workers")
    # the same worker processes were checked already: two round trips to every worker
    # are a good part of a short query's time (a new or restarted worker has a new id)
    key = (getattr(client, "id", id(client)),
           frozenset((w, str(v.get("id", ""))) for w, v in info.items()))
    if key in _CHECKED:
        return {w: dict(f) for w, f in _CHECKED[key].items()}
    # find_spec is the standard library's: it runs on a worker that lacks warpmatch
    found = client.run(util.find_spec, "warpmatch")
    missing = [w for w, spec in found.items() if spec is None]
    if missing:
        raise DistributedError(f"warpmatch is not installed on worker(s) "
                               f"{', '.join(sorted(missing))} (install it, with the same "
                               f"version as here, {__version__}, in their environment)")
    facts = client.run(_facts)
    bad = {w: f["version"] for w, f in facts.items() if f["version"] != __version__}
    if bad:
        raise DistributedError("workers run another warpmatch version than the client's "
                               f"{__version__}: " + ", ".join(f"{w} has {v}"
                                                              for w, v in sorted(bad.items())))
    for w, f in facts.items():
        f["nthreads"] = int(info.get(w, {}).get("nthreads", 1))
    while len(_CHECKED) >= 16:
        _CHECKED.pop(next(iter(_CHECKED)))
    _CHECKED[key] = {w: dict(f) for w, f in facts.items()}
    return facts


#: workers found fit, by client and worker set (see :func:`check_workers`)
_CHECKED: dict[tuple, dict[str, dict]] = {}


def _takes_n_workers(client: Any) -> bool:
    import inspect
    return "n_workers" in inspect.signature(client.scheduler_info).parameters


def _facts() -> dict:
    from .._version import __version__
    return {"version": __version__, "gpus": gpu_count(), "cores": os.cpu_count() or 1}


def worker_threads(facts: dict[str, dict]) -> dict[str, int]:
    """numba threads for a task on each worker: its cores shared by the workers of its
    host (by address) and by the worker's own task threads."""
    by_host: dict[str, int] = {}
    for w in facts:
        host = w.rsplit(":", 1)[0]
        by_host[host] = by_host.get(host, 0) + 1
    out = {}
    for w, f in facts.items():
        host = w.rsplit(":", 1)[0]
        per = max(1, int(f["cores"]) // by_host[host])
        out[w] = max(1, per // max(1, int(f.get("nthreads", 1))))
    return out
