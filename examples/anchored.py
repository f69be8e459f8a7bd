"""Anchored queries: "every triangle / 4-cycle through these accounts".

Anchors restrict a query vertex to a given set of data vertices (ids in the
graph file's id space); the search starts from them instead of from every
vertex, so the cost grows with the anchors' neighbourhoods, not with the graph.

Run: python examples/anchored.py
"""
from __future__ import annotations

import time

import numpy as np

import warpmatch as wm
from warpmatch.graph import barabasi_albert


def main() -> None:
    g = barabasi_albert(50_000, 6, seed=3)
    accounts = np.array([17, 4242, 31337, 49999])     # vertices we care about
    print(g)

    t0 = time.perf_counter()
    n = wm.count(g, "a-b, b-c, c-a", anchors={"a": accounts})
    print(f"triangle embeddings with a in the {accounts.size} accounts: {n:,} "
          f"({time.perf_counter() - t0:.3f} s)")

    # The same answer by brute force: list every triangle embedding, keep those whose
    # column a is an account. (Only sensible on small graphs; the anchored count
    # never enumerates the rest of the graph.)
    emb = np.concatenate(list(wm.match(g, "a-b, b-c, c-a")))
    brute = int(np.isin(emb[:, 0], accounts).sum())
    print(f"brute force over all {len(emb):,} triangle embeddings: {brute:,}")
    assert n == brute

    # Two anchored vertices: 4-cycles a-b-c-d where a is an account and c is a hub.
    hubs = g.to_external(np.argsort(g.degree)[-10:])   # anchors are file ids
    sq = wm.count(g, "a-b, b-c, c-d, d-a", anchors={"a": accounts, "c": hubs})
    print(f"4-cycle embeddings with a in accounts and c among the 10 hubs: {sq:,}")

    # List them: columns are (a, b, c, d) in the graph's ids.
    for batch in wm.match(g, "a-b, b-c, c-d, d-a", anchors={"a": accounts, "c": hubs},
                          limit=3):
        print(batch)


if __name__ == "__main__":
    main()
