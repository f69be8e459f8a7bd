"""Data graphs: CSR storage, file formats, the binary cache, interop and generators.

- :mod:`.csr` — :class:`Graph` (numpy CSR arrays) and :meth:`Graph.from_edges`,
  the one builder that validates edges and drops self-loops and duplicates.
- :mod:`.formats` — :func:`read_graph` / :func:`write_graph` and one reader
  per format (SNAP edge lists, the labeled t/v/e format, Matrix Market,
  CSV and Parquet edge tables), parsed by a numba tokenizer.
- :mod:`.binary` — the memory-mapped ``.wmg`` cache (:func:`save_binary`,
  :func:`load_binary`).
- :mod:`.convert` — networkx and scipy.sparse interop (``Graph.from_networkx`` & co.).
- :mod:`.generators` — seeded R-MAT, Barabási–Albert and Erdős–Rényi graphs and
  random labels.
- :mod:`.labelparts` — edge-label partitions: the graph of a query's labels' edges.
- :mod:`.intervals` — GENEVA's interval-PCSR and GenMap renaming (one CSR per edge label).
- :mod:`.reorder` — a copy with ids ascending by degree (what counts with symmetry
  restrictions run on: :func:`warpmatch._strategies.degree_graph`).
"""
from __future__ import annotations

from .binary import load_binary, save_binary
from .csr import BuildReport, Graph
from .formats import (
    TveData,
    parse_tve,
    read_csv,
    read_edgelist,
    read_graph,
    read_mtx,
    read_parquet,
    read_tve,
    read_vertex_labels,
    write_graph,
)
from .generators import barabasi_albert, erdos_renyi, random_labels, rmat, with_labels

__all__ = [
    "Graph", "BuildReport",
    "read_graph", "write_graph", "save_binary", "load_binary",
    "parse_tve", "TveData", "read_tve", "read_edgelist", "read_vertex_labels", "read_mtx",
    "read_csv", "read_parquet",
    "rmat", "barabasi_albert", "erdos_renyi", "random_labels", "with_labels",
]
