"""Counting and listing on a local Dask cluster of 2 worker processes: the answers of one
process, a lost worker's shards run again, clear errors for what a cluster cannot do."""
from __future__ import annotations

import os
import signal
import time

import networkx as nx
import numpy as np
import pytest

pytest.importorskip("distributed.client", reason="needs warpmatch[dist] (dask)")

import warpmatch as wm  # noqa: E402
from warpmatch.distributed import local_cluster, prepare, write_dataset  # noqa: E402
from warpmatch.errors import DistributedError  # noqa: E402
from warpmatch.graph.reorder import degree_ordered  # noqa: E402
from warpmatch.plan import build_plan  # noqa: E402


def random_graph(seed: int, n: int = 60, m: int = 240, labels: int = 0,
                 directed: bool = False) -> wm.Graph:
    rng = np.random.default_rng(seed)
    return wm.Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n=n,
                               directed=directed, warn=False,
                               vertex_labels=rng.integers(0, labels, n) if labels else None)


def rows(batches) -> list[tuple]:
    b = [np.asarray(x) for x in batches]
    return sorted(map(tuple, np.concatenate(b).tolist())) if b else []


def atlas_queries():
    for A in nx.graph_atlas_g()[3:53]:
        if 3 <= A.number_of_nodes() <= 5 and nx.is_connected(A):
            yield A


def test_atlas_counts_equal_one_process(client):
    """Every connected 3-5-vertex query (networkx's atlas) on a random graph."""
    g = random_graph(1)
    for A in atlas_queries():
        q = wm.Query.from_networkx(A)
        for mode in ("embeddings", "subgraphs"):
            want = wm.count(g, q, mode=mode, backend="cpu")
            r = wm.count_result(g, q, mode=mode, backend="cpu", client=client)
            assert r.count == want, (A.edges(), mode)
            assert r.partial is None and r.backend == "dask:cpu" or want == 0


@pytest.mark.parametrize("kind", ["labeled", "directed", "induced", "anchored"])
def test_variants_equal_one_process(client, kind):
    g = random_graph(2, labels=3 if kind == "labeled" else 0, directed=kind == "directed")
    q = {"labeled": "a:0-b:1, b-c:2, c-a, c-d",
         "directed": "a->b, b->c, c->a",
         "induced": "square", "anchored": "diamond"}[kind]
    kw = {"induced": kind == "induced",
          "anchors": {0: [1, 2, 3, 5, 8]} if kind == "anchored" else None}
    for mode in ("embeddings", "subgraphs"):
        assert wm.count(g, q, mode=mode, client=client, **kw) == \
            wm.count(g, q, mode=mode, backend="cpu", **kw)
        assert rows(wm.match(g, q, mode=mode, client=client, **kw)) == \
            rows(wm.match(g, q, mode=mode, backend="cpu", **kw))


def test_real_graph_from_a_wmg_file_is_mapped_by_the_workers(client, data_path, tmp_path):
    g = wm.read_graph(data_path("snap", "email-Eu-core.txt"))
    path = tmp_path / "email.wmg"
    wm.write_graph(g, path)
    for q in ("triangle", "diamond", "tailed-triangle"):
        r = wm.count_result(os.fspath(path), q, client=client)
        assert r.distributed["graph_sent"] == "file"
        assert r.count == wm.count(g, q, backend="cpu")
    mapped = wm.read_graph(path)            # a memory-mapped graph travels as its file
    t0 = time.time()
    r = wm.count_result(mapped, "square", client=client, shards=40)
    t1 = time.time()
    assert r.distributed["graph_sent"] == "file" and r.distributed["shards"] >= 25
    ss = r.distributed["shard_stats"]
    assert len(ss) == r.distributed["shards"]
    # each shard's timeline lies within the call (one host: the workers share its clock)
    assert all(t0 <= x["start"] <= x["end"] <= t1 for x in ss)
    assert all(x["end"] - x["start"] >= x["count_s"] - 1e-5 for x in ss)   # (rounding)
    assert r.count == wm.count(g, "square", backend="cpu")


def test_listing_dataset_equals_the_rows(client, tmp_path):
    import pyarrow.dataset as ds
    g = random_graph(3)
    q = wm.get_pattern("tailed-triangle")
    plan = build_plan(g, q, purpose="list")
    job = prepare(client, g, plan)
    out = tmp_path / "tt"
    n = write_dataset(job, out, q.names)
    t = ds.dataset(out, format="parquet").to_table()
    got = sorted(zip(*[t.column(c).to_pylist() for c in q.names]))
    assert n == len(got) == len(set(got))
    assert got == rows(wm.match(g, q, backend="cpu"))
    assert sorted(os.listdir(out)) == [f"part-{i:05d}.parquet" for i in range(len(job.shards))]
    with pytest.raises(FileExistsError, match="not an empty directory"):
        write_dataset(job, out, q.names)
    assert not [p for p in os.listdir(tmp_path) if ".partial-" in p]


def test_limits_and_progress(client):
    g = random_graph(4, n=80, m=600)
    seen = []
    r = wm.count_result(g, "triangle", client=client, shards=20,
                        progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, r.distributed["shards"])
    assert seen[-1][0] == seen[-1][1] == r.distributed["shards"]
    full = r.count
    part = wm.count_result(g, "triangle", client=client, shards=20, limit=1)
    assert part.partial == "limit 1 reached" and 1 <= part.count <= full
    assert "at least" in part.describe()
    assert len(list(np.concatenate(list(wm.match(g, "triangle", client=client,
                                                  limit=7))))) == 7


def kill_one_worker(client) -> None:
    pids = client.run(os.getpid)
    os.kill(sorted(pids.values())[0], signal.SIGKILL)


def test_a_killed_worker_loses_nothing(tmp_path):
    """A worker process killed in the middle of a run: its shards run again elsewhere,
    the count is exact, the dataset has every row once."""
    g = random_graph(5, n=400, m=6000)
    q = wm.get_pattern("4-clique")
    want = wm.count(g, q, backend="cpu")
    want_rows = rows(wm.match(g, q, backend="cpu", mode="subgraphs"))
    with local_cluster(workers=2) as c:
        killed = []

        def progress(done, total):
            if done == 2 and not killed:
                killed.append(True)
                kill_one_worker(c)
        r = wm.count_result(g, q, client=c, shards=64, progress=progress)
        assert killed and r.count == want
        killed.clear()
        plan = build_plan(g, q, mode="subgraphs", purpose="list")
        job = prepare(c, g, plan, shards=64)
        import pyarrow.dataset as ds
        write_dataset(job, tmp_path / "rows", q.names, progress=progress)
        assert killed
        t = ds.dataset(tmp_path / "rows", format="parquet").to_table()
        got = sorted(zip(*[t.column(n).to_pylist() for n in q.names]))
        assert got == want_rows
        c.cluster.close()


def test_a_worker_that_cannot_read_the_graph_is_named(client, tmp_path):
    g = random_graph(6)
    path = tmp_path / "g.wmg"
    wm.write_graph(g, path)
    plan = build_plan(g, wm.get_pattern("triangle"), purpose="count")
    job = prepare(client, g, plan, graph_path=path)
    os.remove(path)
    from warpmatch.distributed import count_plan
    with pytest.raises(DistributedError, match=r"worker tcp://.*cannot read the graph file"):
        count_plan(job)


def test_explain_says_how_the_cluster_would_run(client):
    g = random_graph(8, n=200, m=2000)
    text = wm.explain(g, "diamond", client=client, shards=12)
    assert "2 workers" in text and "shards: " in text and "12 asked for" in text
    assert "estimated cost per shard" in text


def _set_worker_version(v: str | None) -> str:
    import warpmatch._version as V
    if v is not None:
        V.__version__ = v
    return V.__version__


def test_a_worker_with_another_version_is_named(client, monkeypatch):
    """Checked before any work, and checked again for workers not seen before (a worker
    set already found fit is not asked again: the test forgets it first)."""
    from warpmatch.distributed import cluster
    monkeypatch.setattr(cluster, "_CHECKED", {})
    real = next(iter(client.run(_set_worker_version, None).values()))
    try:
        client.run(_set_worker_version, "0.0.0-other")
        with pytest.raises(DistributedError, match=r"tcp://.* has 0\.0\.0-other"):
            cluster.check_workers(client)
    finally:
        client.run(_set_worker_version, real)
    facts = cluster.check_workers(client)
    assert len(facts) == 2
    calls = []
    monkeypatch.setattr(client, "run", lambda *a, **k: calls.append(a) or {})
    assert cluster.check_workers(client) == facts and not calls     # remembered


def test_missing_extra_is_named(monkeypatch):
    import builtins
    real = builtins.__import__

    def no_dask(name, *a, **k):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError("No module named 'distributed'")
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(DistributedError, match=r"warpmatch\[dist\]"):
        wm.count(wm.Graph.from_edges([0], [1]), "a-b", client=object())


def test_cli_count_and_match_with_workers(tmp_path):
    import json

    import pyarrow.dataset as ds
    from click.testing import CliRunner

    from warpmatch.cli import cli
    g = random_graph(7, n=50, m=200)
    path = tmp_path / "g.wmg"
    wm.write_graph(g, path)
    run = CliRunner().invoke
    res = run(cli, ["count", str(path), "triangle", "square", "--workers", "2", "--json"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.strip().splitlines()
    d = json.loads(lines[-1])
    assert d["count"] == wm.count(g, "square", backend="cpu")
    assert d["distributed"]["workers"] == 2 and d["distributed"]["graph_sent"] == "file"
    assert f"triangle: {wm.count(g, 'triangle', backend='cpu'):,} embeddings" in res.stdout
    out = tmp_path / "rows"
    res = run(cli, ["match", str(path), "diamond", "-o", str(out), "--workers", "2",
                    "--mode", "subgraphs"])
    assert res.exit_code == 0, res.output
    t = ds.dataset(out, format="parquet").to_table()
    assert sorted(zip(*[t.column(c).to_pylist() for c in t.column_names])) == \
        rows(wm.match(g, "diamond", mode="subgraphs", backend="cpu"))
    res = run(cli, ["match", str(path), "diamond", "-o", str(out), "--workers", "2"])
    assert res.exit_code != 0 and "is a directory" in res.output      # never overwritten
    res = run(cli, ["count", str(path), "triangle", "--workers", "2", "--scheduler", "x"])
    assert res.exit_code == 2 and "not both" in res.output
    res = run(cli, ["match", str(path), "triangle", "-o", "x.csv", "--workers", "2"])
    assert res.exit_code == 2 and "Parquet dataset" in res.output


def test_an_in_memory_graph_is_written_once_for_the_workers(client):
    from warpmatch.distributed import graphs
    g = random_graph(8)
    r = wm.count_result(g, "triangle", client=client)
    assert r.distributed["graph_sent"] == "spilled file"
    # the triangle and the square are counted on the copy with ids ascending by degree
    assert r.vertex_order == "degree"
    first = graphs._SPILLED[degree_ordered(g)]
    assert wm.count_result(g, "square", client=client).distributed["graph_sent"] == \
        "spilled file"
    assert graphs._SPILLED[degree_ordered(g)] is first and os.path.exists(first.path)


@pytest.mark.parametrize("vertex_order", ["auto", "given", "degree"])
def test_vertex_orders_equal_one_process(client, vertex_order):
    g = random_graph(9)
    for q in ("triangle", "square", "tailed-triangle", "4-clique"):
        r = wm.count_result(g, q, client=client, backend="cpu", vertex_order=vertex_order)
        one = wm.count_result(g, q, backend="cpu", vertex_order=vertex_order)
        assert (r.count, r.vertex_order) == (one.count, one.vertex_order), q
        assert r.graph is g
