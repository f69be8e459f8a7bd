"""``--workers N`` / ``--scheduler ADDRESS``: running a search command on a Dask cluster.

:func:`cluster_options` adds both options to a command; :func:`cluster_client` turns them
into a :class:`distributed.Client` (a new local cluster, or the running scheduler), prints
the dashboard's address on a terminal, and closes what it started.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterator

import click


def cluster_options(f: Callable) -> Callable:
    f = click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="Run on the Dask cluster whose scheduler is at ADDRESS "
                          "(tcp://host:port); needs warpmatch[dist] here and on the "
                          "workers.")(f)
    f = click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Run on a new local Dask cluster of N worker processes (one per "
                          "GPU with dask-cuda and GPUs); needs warpmatch[dist].")(f)
    return f


@contextlib.contextmanager
def cluster_client(workers: int | None, scheduler: str | None) -> Iterator[Any]:
    """The client of the cluster the options name, or ``None`` for neither.

    Raises
    ------
    click.UsageError
        Both options given.
    click.ClickException
        No ``warpmatch[dist]``, or no scheduler at the address (the message says
        which).
    """
    if workers is None and scheduler is None:
        yield None
        return
    if workers is not None and scheduler is not None:
        raise click.UsageError("give --workers (a new local cluster) or --scheduler (a "
                               "running one), not both")
    from ..distributed import connect, local_cluster
    from ..errors import DistributedError
    try:
        if scheduler is not None:
            client = connect(scheduler)
        else:
            import logging
            # a local cluster's start-up and shut-down chatter is Dask's, not the user's
            logging.getLogger("distributed").setLevel(logging.ERROR)
            client = local_cluster(workers=workers, silence_logs=logging.ERROR)
    except DistributedError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        if sys.stderr.isatty():
            click.echo(f"Dask dashboard: {client.dashboard_link}", err=True)
        yield client
    finally:
        client.close()
        if scheduler is None:
            client.cluster.close()
