"""Quickstart: count and list query-graph embeddings with the Python API.

Run: python examples/quickstart.py   (a few seconds; generates its own graph)
"""
from __future__ import annotations

import networkx as nx
import numpy as np

import warpmatch as wm
from warpmatch.graph import barabasi_albert


def main() -> None:
    # A seeded power-law graph: 20,000 vertices, each new one attaching 5 edges.
    g = barabasi_albert(20_000, 5, seed=1)
    print(g)

    # A query from the DSL, by name, or from networkx: all the same triangle.
    q = wm.Query.parse("a-b, b-c, c-a")
    emb = wm.count(g, q)                        # every injective map: 6 per triangle
    sub = wm.count(g, "triangle", mode="subgraphs")   # each triangle once
    print(f"triangles: {emb:,} embeddings, {sub:,} subgraphs (ratio {emb // max(sub, 1)})")
    assert emb == 6 * sub
    assert wm.count(g, nx.cycle_graph(3)) == emb

    # Induced vs non-induced: a 4-cycle with no chords.
    print(f"4-cycles: {wm.count(g, 'square', mode='subgraphs'):,} subgraphs, "
          f"{wm.count(g, 'square', mode='subgraphs', induced=True):,} of them induced")

    # Listing streams (rows x k) numpy batches in query-vertex order (a, b, c).
    first = np.concatenate(list(wm.match(g, q, mode="subgraphs", limit=5)))
    print("first triangles (a, b, c):")
    print(first)
    for a, b, c in first:
        assert g.has_edge(a, b) and g.has_edge(b, c) and g.has_edge(c, a)

    # How the search runs: filters, matching order, symmetry breaking.
    print(wm.explain(g, "diamond", mode="subgraphs"))


if __name__ == "__main__":
    main()
