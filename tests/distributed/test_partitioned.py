"""Partitions as shards: a partitioned count on a 2-worker Dask cluster equals the in-memory one.

Each part and each inter-partition search is cut into root-range shards; workers map the
part files of a partition directory (``graph_sent == "file"``), and an in-memory
partition is shipped part by part.
"""
from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import warpmatch as wm
from warpmatch.graph.csr import Graph
from warpmatch.partition import Partitioned

pytest.importorskip("distributed.client", reason="needs warpmatch[dist] (dask)")


@pytest.fixture(scope="module")
def g() -> Graph:
    G = nx.powerlaw_cluster_graph(400, 4, 0.3, seed=11)
    rng = np.random.default_rng(3)
    return Graph.from_edges(*zip(*G.edges()), vertex_labels=rng.integers(0, 3, 400),
                            ids=np.arange(400) * 3 + 1, name="plc-labeled")


@pytest.mark.parametrize("mode", ["embeddings", "subgraphs"])
def test_counts_equal_the_in_memory_ones(client, g: Graph, mode: str) -> None:
    for dsl in ("triangle", "diamond", "house", "a:0-b:1, b-c:2, c-a"):
        q = wm.api.as_query(dsl, g)
        want = wm.count(g, q, mode=mode, backend="cpu")
        r = wm.api.count_result(g, q, mode=mode, backend="cpu", client=client, partitions=3)
        assert r.count == want, dsl
        d = r.as_dict()
        assert d["strategy"] == "partitioned" and d["partition"]["parts"] == 3
        assert d["partition"]["intra"] + d["partition"]["inter"] == want
        assert d["distributed"]["workers"] == 2 and d["distributed"]["shards"] > 0


def test_workers_map_the_part_files_of_a_directory(client, g: Graph, tmp_path: Path) -> None:
    out = Partitioned.build(g, parts=4).write(tmp_path / "parts")
    anchors = {"a": [1, 4, 7, 10, 13]}
    want = wm.count(g, "a-b, b-c, c-a", anchors=anchors)
    r = wm.api.count_result(out, "a-b, b-c, c-a", anchors=anchors, client=client,
                            backend="cpu")
    assert r.count == want
    sent = {s["graph_sent"] for s in r.distributed["per_search"]}
    assert sent == {"file"}
    assert {s["kind"] for s in r.distributed["per_search"]} == {"intra", "inter"}


def _row_set(batches) -> list[tuple[int, ...]]:
    rows = [tuple(r) for b in batches for r in np.asarray(b).tolist()]
    return sorted(rows)


@pytest.mark.parametrize("mode", ["embeddings", "subgraphs"])
def test_listing_by_partitions_on_a_cluster_equals_the_in_memory_rows(client, g: Graph,
                                                                        mode: str) -> None:
    for dsl in ("triangle", "diamond", "a:0-b:1, b-c:2, c-a"):
        want = _row_set(wm.match(g, dsl, mode=mode, backend="cpu"))
        got = _row_set(wm.match(g, dsl, mode=mode, backend="cpu", client=client,
                                partitions=3))
        assert got == want, dsl                 # each match once, none missing
    # a limit stops at exactly that many rows, each a real match
    some = _row_set(wm.match(g, "diamond", client=client, partitions=3, limit=25))
    assert len(some) == 25 and set(some) <= set(_row_set(wm.match(g, "diamond")))


def test_listing_a_partition_directory_with_anchors_on_a_cluster(client, g: Graph,
                                                                  tmp_path: Path) -> None:
    out = Partitioned.build(g, parts=4).write(tmp_path / "parts")
    anchors = {"a": [1, 4, 7, 10, 13, 16, 19]}
    want = _row_set(wm.match(g, "a-b, b-c, c-a", anchors=anchors))
    assert want
    assert _row_set(wm.match(out, "a-b, b-c, c-a", anchors=anchors, client=client)) == want


def test_cli_writes_a_dataset_by_partitions_with_workers(g: Graph, tmp_path: Path) -> None:
    import sys

    import pyarrow.parquet as pq
    from click.testing import CliRunner

    from warpmatch.cli import cli
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from cli_helpers import last_json
    parts = Partitioned.build(g, parts=3).write(tmp_path / "parts")
    for src, extra in ((str(parts), []), (None, ["--partitions", "3"])):
        if src is None:
            src = str(tmp_path / "g.wmg")
            wm.graph.binary.save_binary(g, src)
        dest = tmp_path / f"rows-{len(extra)}"
        r = CliRunner().invoke(cli, ["match", src, "house", "-o", str(dest), "--workers", "2",
                                     "--json", *extra])
        d = last_json(r)
        table = pq.read_table(dest)
        got = sorted(map(tuple, np.column_stack([table[c].to_numpy()
                                                 for c in table.column_names]).tolist()))
        assert got == _row_set(wm.match(g, "house"))
        assert d["count"] == len(got) and d["distributed"]["searches"] > 3
        assert "searches of 3 parts" in r.output
        names = sorted(f.name for f in dest.iterdir())
        assert names and all(n.startswith("part-") and n.endswith(".parquet") for n in names)
    # a query with no match at all (a label the graph lacks): an empty dataset, no error
    r = CliRunner().invoke(cli, ["match", str(parts), "a:7-b:7, b-c:7, c-a", "-o",
                                 str(tmp_path / "none"), "--workers", "2", "--json"])
    assert last_json(r)["count"] == 0 and pq.read_table(tmp_path / "none").num_rows == 0


def test_cli_counts_a_partition_directory_with_workers(g: Graph, tmp_path: Path) -> None:
    import sys
    from click.testing import CliRunner

    from warpmatch.cli import cli
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from cli_helpers import last_json
    out = Partitioned.build(g, parts=3).write(tmp_path / "parts")
    r = CliRunner().invoke(cli, ["count", str(out), "diamond", "--workers", "2", "--json"])
    d = last_json(r)
    assert d["count"] == wm.count(g, "diamond") and d["partition"]["parts"] == 3
    assert "partitioned: 3 parts" in r.output and "2 workers" in r.output
