"""Matching on a Dask cluster: the same answers as one process, from many.

The layer between the engines and the API (DESIGN.md): :func:`warpmatch.count`,
:func:`warpmatch.match` and :func:`warpmatch.count_result` take ``client=`` (a
:class:`distributed.Client`) and run here; ``warpmatch count|match --workers N``
or ``--scheduler tcp://host:port`` on the command line.

- :mod:`.cluster` — starting or joining a cluster, checking its workers;
- :mod:`.shards` — cutting a plan's search tree into disjoint, cost-sized shards;
- :mod:`.graphs` — the graph reaches each worker once (a mapped ``.wmg`` file, or
  scattered once);
- :mod:`.static` — shards as tasks: counts summed, matches gathered or written
  as a Parquet dataset;
- :mod:`.partitioned` — partitions as shards: each part's search and each
  inter-partition search (:mod:`warpmatch.partition`) cut into shards;
- :mod:`.continuous` — ``warpmatch.ContinuousMatcher(..., client=)``: a replica
  of the dynamic graph on every worker, each searching its share of every
  batch's updates (``warpmatch stream --workers N``).

Needs ``pip install 'warpmatch[dist]'`` (``[dist-cuda]`` for one worker per GPU);
without it, using this layer raises :class:`~warpmatch.errors.DistributedError`
naming the extra.
"""
from __future__ import annotations

from .cluster import check_workers, connect, local_cluster
from .continuous import DistributedMatcher
from .shards import Shard, make_shards, shard_plan
from .static import count_plan, match_plan, prepare, write_dataset

__all__ = ["local_cluster", "connect", "check_workers", "Shard", "make_shards", "shard_plan",
           "prepare", "count_plan", "match_plan", "write_dataset", "DistributedMatcher"]
