"""``sample-queries``: random connected queries drawn from a data graph.

The query sets of the labeled benchmarks (Sun & Luo, SIGMOD 2020; gMatch §6.1)
are grown from a random vertex by random neighbours; this command writes such a
set with :func:`warpmatch.query.sample.random_walk_query` (the subgraph induced
by the walk's vertices, thinned to a sparse query with ``--sparse``), named as
the shipped sets are: ``query_{dense|sparse}_{K}_{i}.graph``.

How it differs from the shipped sets' recipe:

- The walk's vertices induce the query (gMatch's "induced" variant); the
  walk-edges variant is not offered.
- Query ``i`` is seeded from ``--seed`` and ``i`` alone (numpy's
  ``SeedSequence``), so a larger ``--count`` keeps the first queries; two
  queries of a set may coincide.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import click

from ._common import (
    CONTEXT_SETTINGS,
    _debug_option,
    _emit_json,
    _graph_line,
    _graph_options,
    _json_option,
    _load_graph,
    cli,
)

#: most queries one call writes
MAX_COUNT = 100_000


def query_seeds(seed: int, count: int) -> list[int]:
    """The walk seed of each query ``1..count``: query ``i``'s depends on ``seed`` and ``i``
    only (the first words of one ``SeedSequence``), not on ``count``."""
    import numpy as np
    return [int(x) for x in np.random.SeedSequence(int(seed)).generate_state(count, np.uint64)]


@cli.command("sample-queries", context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.option("--vertices", "-k", "k", type=int, required=True,
              help="Query vertices (2..64; a dense query needs at least 4).")
@click.option("--count", "-n", type=int, default=1, show_default=True,
              help="Queries to write.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the set: query i depends only on the graph, K, the density, "
                   "the seed and i.")
@click.option("--dense/--sparse", "dense", default=True, show_default=True,
              help="Average degree >= 3 (walks whose induced subgraph is sparser are "
                   "redrawn), or < 3 (random non-bridge edges removed).")
@click.option("--out", "-o", "out", type=click.Path(file_okay=False), default=".",
              show_default=True, help="Directory to write the queries into (created).")
@click.option("--query-format", "qfmt", type=click.Choice(["auto", "graph", "dsl"]),
              default="auto", show_default=True,
              help="graph: t/v/e files (.graph), as the shipped sets; dsl: DSL text (.txt); "
                   "auto: t/v/e where it can hold the query (undirected, every vertex "
                   "labeled), else DSL.")
@_graph_options
@_json_option
@_debug_option
def sample_queries(graph: str, k: int, count: int, seed: int, dense: bool, out: str,
                   qfmt: str, fmt: str | None, directed: bool, vertex_labels: str | None,
                   as_json: bool) -> None:
    """Write COUNT random connected K-vertex queries drawn from GRAPH.

    Each query is the subgraph of GRAPH induced by the first K distinct vertices
    of a random walk, with their labels, so it matches GRAPH at least once
    (the walk's own vertices); --sparse thins it to average degree below 3.

    \b
    Examples:
      warpmatch sample-queries yeast.graph -k 12 -n 100 --seed 1 -o queries/
      warpmatch sample-queries web.txt -k 6 --sparse -o q/ --json
      warpmatch count yeast.graph queries/query_dense_12_1.graph
    """
    from ..errors import QueryError
    from ..query.io import write_query_file
    from ..query.sample import average_degree, random_walk_query
    if not 1 <= count <= MAX_COUNT:
        raise click.BadParameter(f"must be in 1..{MAX_COUNT:,}, not {count}",
                                 param_hint="'--count'")
    g, _ = _load_graph(graph, fmt, directed, vertex_labels)
    density = "dense" if dense else "sparse"
    t0 = time.perf_counter()
    queries = []
    for i, s in enumerate(query_seeds(seed, count), 1):
        try:
            q = random_walk_query(g, k, density, seed=s, name=f"query_{density}_{k}_{i}")
        except ValueError as e:
            raise QueryError(f"query {i} of {count}: {e}") from None
        queries.append(q)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for q in queries:
        tve = not q.directed and bool((q.vertex_labels >= 0).all())
        if qfmt == "graph" and not tve:
            raise QueryError(f"{q.name}: --query-format graph (t/v/e) cannot hold it ("
                             f"{'directed' if q.directed else 'unlabeled vertices'}); use "
                             "--query-format dsl or auto")
        ext = ".graph" if (qfmt == "graph" or (qfmt == "auto" and tve)) else ".txt"
        path = target / (q.name + ext)
        write_query_file(q, path)
        rows.append({"file": os.fspath(path), "vertices": int(q.k), "edges": int(q.m),
                     "average_degree": round(average_degree(q), 3)})
    seconds = time.perf_counter() - t0
    click.echo(f"graph: {_graph_line(g)}")
    click.echo(f"{count} {density} {k}-vertex queries (seed {seed}) written to "
               f"{os.fspath(target)} in {seconds:.2f} s")
    for r in rows[:10]:
        click.echo(f"  {r['file']}: {r['edges']} edges, average degree "
                   f"{r['average_degree']:g}")
    if len(rows) > 10:
        click.echo(f"  ... and {len(rows) - 10} more")
    if as_json:
        _emit_json({"graph": g.name, "vertices": k, "density": density, "seed": seed,
                    "count": count, "seconds": seconds, "queries": rows})
