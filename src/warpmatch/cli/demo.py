"""``demo``: a tour on a generated graph, every count cross-checked."""
from __future__ import annotations

import time
from typing import Any, Sequence

import click

from ._common import (
    BACKENDS,
    CONTEXT_SETTINGS,
    _debug_option,
    _emit_json,
    _graph_line,
    _json_option,
    cli,
)

DEMO_PATTERNS = ("triangle", "square", "diamond", "tailed-triangle", "4-clique", "house", "5-cycle")


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[bool]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def fmt(r: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if rt else c.ljust(w) for c, w, rt in zip(r, widths, right))
    lines = [fmt(cells[0]), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in cells[1:]]
    return "\n".join(line.rstrip() for line in lines)


#: the demo's check lists every embedding of a sample with the pure-Python reference engine;
#: these bound its cost (about a second for the default patterns on a laptop CPU)
DEMO_CHECK_VERTICES = 32
DEMO_CHECK_EMBEDDINGS = 20_000


def _demo_check(g: Any, q: Any, backend: str) -> tuple[bool, dict[str, int]]:
    """Check ``backend``'s counts of ``q`` against the reference engine on a part of ``g``.

    The part is the subgraph induced by the vertices ``0..s-1`` (in a
    Barabási–Albert graph the oldest, densest ones, where the demo patterns occur
    unless the graph is too sparse, e.g. a tree with ``--m 1``: then the check
    has nothing to compare and the table says so), ``s`` starting at
    :data:`DEMO_CHECK_VERTICES` and halved until it holds at most
    :data:`DEMO_CHECK_EMBEDDINGS` embeddings. On it, ``backend`` counts embeddings
    and subgraphs as in the table (one symmetry-broken search, times |Aut| for
    embeddings), while the reference
    engine lists every embedding with no symmetry breaking and the distinct
    subgraphs are told apart by their vertex and edge sets. The two sides share
    the planner's filters and order, not the automorphisms, restrictions or
    search code, so the check can fail where ``embeddings = subgraphs x |Aut|``
    (true by construction) cannot.

    Parameters
    ----------
    g : Graph
        The demo graph (undirected, unlabeled).
    q : Query
        The pattern.
    backend : str
        The engine whose counts are checked.

    Returns
    -------
    tuple of (bool, dict)
        Whether both counts agree, and ``{"vertices": s, "embeddings": ...,
        "subgraphs": ...}`` of the reference side.
    """
    from ..api import count_result, match
    from ..graph.csr import Graph

    src, dst = g.edges()
    s = min(g.n, DEMO_CHECK_VERTICES)
    while True:
        keep = (src < s) & (dst < s)
        part = Graph.from_edges(src[keep], dst[keep], n=s, name=f"{g.name}[:{s}]")
        rows = list(match(part, q, backend="reference", limit=DEMO_CHECK_EMBEDDINGS + 1))
        n_emb = sum(len(b) for b in rows)
        # fewer vertices than the pattern: no embeddings, so this always ends
        if n_emb <= DEMO_CHECK_EMBEDDINGS:
            break
        s //= 2
    qe = q.edges.tolist()
    subgraphs = {(frozenset(r), frozenset(frozenset((r[a], r[b])) for a, b in qe))
                 for b in rows for r in b.tolist()}
    emb = count_result(part, q, mode="embeddings", backend=backend).count
    sub = count_result(part, q, mode="subgraphs", backend=backend).count
    ok = emb == n_emb and sub == len(subgraphs)
    return ok, {"vertices": s, "embeddings": n_emb, "subgraphs": len(subgraphs)}


def _check_word(ok: bool, ref: dict[str, int]) -> str:
    """The demo table's verdict on a sample: a check of zero against zero is no check."""
    if not ok:
        return "MISMATCH"
    return "ok" if ref["embeddings"] else "none in sample"


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.option("--n", "n", type=click.IntRange(min=10), default=20_000, show_default=True,
              help="Vertices of the generated Barabási–Albert graph.")
@click.option("--m", "m", type=click.IntRange(min=1), default=5, show_default=True,
              help="Edges each new vertex attaches.")
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--patterns", "pattern_list", default=",".join(DEMO_PATTERNS), show_default=True,
              help="Comma-separated pattern names.")
@click.option("--backend", type=click.Choice(BACKENDS), default="auto", show_default=True)
@_json_option
@_debug_option
def demo(n: int, m: int, seed: int, pattern_list: str, backend: str, as_json: bool) -> None:
    """Count several patterns in a generated graph and print a table.

    Generates a seeded Barabási–Albert graph (no download), then counts each
    pattern twice on the best available backend: all embeddings, and distinct
    subgraphs (found once each through symmetry breaking, not by division).

    The check column is independent of those counts: on a sample, the
    subgraph induced by the graph's first S vertices (S <= 32, shown in the
    column, the oldest and densest part), the backend's two counts must equal
    the pure-Python reference engine listing every embedding without symmetry
    breaking and the distinct subgraphs among them (the reference engine is
    too slow for the whole graph).

    \b
    Examples:
      warpmatch demo
      warpmatch demo --n 50000 --patterns triangle,4-clique,house --json
    """
    from ..api import count_result
    from ..engine import resolve_backend
    from ..graph import barabasi_albert
    from ..query import get_pattern

    names = [p.strip() for p in pattern_list.split(",") if p.strip()]
    queries = [get_pattern(p) for p in names]          # fail fast on a typo
    engine = resolve_backend(backend)
    t_start = time.perf_counter()
    g = barabasi_albert(n, m, seed=seed)
    g_s = time.perf_counter() - t_start
    click.echo(f"graph: Barabási–Albert n={n:,} m={m} seed={seed}: {_graph_line(g)} "
               f"[{g_s:.2f} s]")
    # compile (or load from numba's cache) once on a tiny graph of the same dtypes,
    # so the table's seconds are search time and the JIT cost is reported apart
    t0 = time.perf_counter()
    tiny = barabasi_albert(64, 2, seed=seed)
    for mode in ("embeddings", "subgraphs"):
        count_result(tiny, queries[0], mode=mode, backend=engine.name)
    jit_s = time.perf_counter() - t0
    click.echo(f"backend: {engine.name} (warm-up incl. JIT compilation or cache load: "
               f"{jit_s:.2f} s)")
    click.echo("")
    rows, out = [], []
    for q in queries:
        emb = count_result(g, q, mode="embeddings", backend=engine.name)
        sub = count_result(g, q, mode="subgraphs", backend=engine.name)
        aut = int(sub.plan.aut_size)
        ok, ref = _demo_check(g, q, engine.name)
        rows.append([q.name, q.k, f"{emb.count:,}", f"{sub.count:,}", aut,
                     f"{emb.seconds:.2f}", f"{sub.seconds:.2f}", emb.backend,
                     f"{_check_word(ok, ref)} ({ref['vertices']} v)"])
        out.append({"pattern": q.name, "k": int(q.k), "embeddings": emb.count,
                    "subgraphs": sub.count, "automorphisms": aut,
                    "seconds_embeddings": round(emb.seconds, 6),
                    "seconds_subgraphs": round(sub.seconds, 6), "backend": emb.backend,
                    "check": ok, "check_sample": ref})
    click.echo(_table(["pattern", "k", "embeddings", "subgraphs", "|Aut|", "emb s", "sub s",
                       "backend", "check (sample)"], rows,
                      [False, True, True, True, True, True, True, False, False]))
    total = time.perf_counter() - t_start
    click.echo("")
    click.echo(f"counts are non-induced; embeddings = every injective map, subgraphs = "
               f"distinct subgraphs. Total {total:.1f} s.")
    click.echo(f"check (sample): on the subgraph induced by the first (v) vertices, "
               f"{engine.name}'s counts equal the reference engine's (every embedding listed, "
               f"no symmetry breaking), which is too slow for the whole graph.")
    if not all(o["check"] for o in out):
        bad = ", ".join(o["pattern"] for o in out if not o["check"])
        raise click.ClickException(f"{engine.name} and the reference engine disagree on a "
                                   f"sample of the graph for: {bad}")
    if as_json:
        _emit_json({"graph": {"generator": "barabasi_albert", "n": n, "m": m, "seed": seed,
                              "vertices": g.n, "edges": g.num_edges},
                    "backend": engine.name, "mode": "embeddings+subgraphs", "induced": False,
                    "seconds": round(total, 6), "warmup_seconds": round(jit_s, 6),
                    "patterns": out})



