"""Graphs larger than the GPU's memory: partitioned enumeration (PBE).

Map: :mod:`.coarsen` (METIS on a contracted graph: memory a small multiple of the
graph's) < :mod:`.split` (how many parts a budget needs, METIS or BFS part ids) <
:mod:`.store` (:class:`Partitioned`: the parts' induced subgraphs, written once
to a directory and memory-mapped) < :mod:`.plans` (per-part plans; the
inter-partition search sequences with DupRemove and automorphism sharing) <
:mod:`.search` (:func:`count_partitioned`, :func:`match_partitioned`: intra
then inter, exact in every mode).

Implements Guo et al., "Exploiting reuse for GPU subgraph enumeration" (PBE),
§3-§5; each module lists how it differs from the paper.
"""
from .search import PartitionStats, count_partitioned, describe, match_partitioned
from .split import PartitionWarning, parse_bytes, partition_vertices
from .store import Partitioned, is_partition_dir

__all__ = ["Partitioned", "PartitionStats", "PartitionWarning", "count_partitioned",
           "describe", "is_partition_dir", "match_partitioned", "parse_bytes",
           "partition_vertices"]
