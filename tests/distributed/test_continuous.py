"""ContinuousMatcher(..., client=...): replicas on a local cluster of 2 worker processes give
one process's per-update deltas, rows, validity and errors."""
from __future__ import annotations

import os
import signal
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed.client", reason="needs warpmatch[dist] (dask)")

import warpmatch as wm  # noqa: E402
from warpmatch.distributed import local_cluster  # noqa: E402
from warpmatch.distributed.continuous import DistributedMatcher  # noqa: E402
from warpmatch.errors import DistributedError, InputFormatError  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stream"))
from test_matcher import random_stream  # noqa: E402


def by_update(d) -> dict:
    out: dict = {}
    for sign, rows, upd in (("+", d.plus, d.plus_update), ("-", d.minus, d.minus_update)):
        for r, u in zip(rows.tolist(), upd.tolist()):
            out.setdefault((u, sign), []).append(tuple(r))
    return {k: sorted(v) for k, v in out.items()}


def same(a, b, rows: bool) -> None:
    assert np.array_equal(a.plus_counts, b.plus_counts)
    assert np.array_equal(a.minus_counts, b.minus_counts)
    assert (a.added, a.removed) == (b.added, b.removed)
    assert np.array_equal(a.valid, b.valid) and a.reasons == b.reasons
    if rows:
        assert by_update(a) == by_update(b)
        assert np.all(np.diff(a.plus_update) >= 0) and np.all(np.diff(a.minus_update) >= 0)


def test_college_msg_stream_equals_one_process(client, data_path):
    """CollegeMsg with a one-week window (insertions and deletions): triangle and square,
    counts and rows, batch by batch."""
    from warpmatch.errors import InputCleanupWarning
    from warpmatch.stream.updates import replay_temporal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputCleanupWarning)
        g0, ups = replay_temporal(data_path("snap", "CollegeMsg.txt"), window=604800)
    ups = ups.slice(0, 4000)
    for q, counts_only in (("triangle", False), ("square", True)):
        one = wm.ContinuousMatcher(g0, q, backend="cpu")
        many = wm.ContinuousMatcher(g0, q, backend="cpu", client=client)
        assert isinstance(many, DistributedMatcher) and many.replicas == 2
        assert many.backend == "dask:cpu"
        for a, b in zip(many.apply_batches(ups, 1000, counts_only),
                        one.apply_batches(ups, 1000, counts_only)):
            same(a, b, not counts_only)
        assert many.count == one.count and many.initial_count == one.initial_count
        assert many.graph.num_edges == one.graph.snapshot().num_edges
        many.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_streams_with_invalid_updates_and_new_vertices(client, seed):
    oracle, ups = random_stream(seed, directed=seed == 2, vlab=2, elab=0, n=14, m=30, B=120)
    g0 = oracle.graph()
    q = "a:0->b, b->c, c->a" if seed == 2 else "a:0-b, b-c, c-a, c-d"
    kw = dict(induced=seed == 3, backend="cpu", on_invalid="skip")
    one = wm.ContinuousMatcher(g0, q, **kw)
    with wm.ContinuousMatcher(g0, q, client=client, **kw) as many:
        for a, b in zip(many.apply_batches(ups, 37), one.apply_batches(ups, 37)):
            same(a, b, True)
        assert many.count == one.count


def test_an_invalid_batch_changes_no_replica(client):
    g = wm.Graph.from_edges([0, 1, 2], [1, 2, 3])
    one = wm.ContinuousMatcher(g, "triangle", backend="cpu")
    many = wm.ContinuousMatcher(g, "triangle", backend="cpu", client=client)
    bad = [(0, 2, "+"), (1, 2, "+")]                       # 1-2 exists: the whole batch fails
    for m in (one, many):
        with pytest.raises(InputFormatError, match="update 1"):
            m.apply(bad)
    good = [(0, 2, "+"), (1, 3, "+"), (0, 3, "+")]
    same(many.apply(good), one.apply(good), True)
    assert many.count == one.count == wm.count(one.graph.snapshot(), "triangle")
    many.close()
    with pytest.raises(DistributedError, match="closed"):
        many.apply(good)


def test_a_lost_replica_is_named():
    g = wm.Graph.from_edges(np.arange(50), (np.arange(50) + 1) % 50)
    with local_cluster(workers=2) as c:
        many = wm.ContinuousMatcher(g, "triangle", backend="cpu", client=c)
        pids = c.run(os.getpid)
        os.kill(sorted(pids.values())[0], signal.SIGKILL)
        with pytest.raises(DistributedError, match=r"replica on worker tcp://"):
            many.apply([(0, 2, "+"), (1, 3, "+")])
        with pytest.raises(DistributedError, match="can no longer be used"):
            many.apply([(0, 3, "+")])
        c.cluster.close()


def test_cli_stream_with_workers(tmp_path):
    """``warpmatch stream --workers 2``: the same summary and delta rows as one process."""
    import json

    import pyarrow.parquet as pq
    from click.testing import CliRunner

    from warpmatch.cli import cli
    oracle, ups = random_stream(11, directed=False, vlab=0, elab=0, n=30, m=90, B=200,
                                invalid=False, new_vertices=False)
    path, up = tmp_path / "g0.wmg", tmp_path / "ups.txt"
    wm.write_graph(oracle.graph(), path)
    wm.write_updates(up, ups)
    run = CliRunner().invoke
    outs = {}
    for name, extra in (("one", []), ("many", ["--workers", "2"])):
        out = tmp_path / f"{name}.parquet"
        res = run(cli, ["stream", str(path), "tailed-triangle", str(up), "--batch-size", "64",
                        "--backend", "cpu", "-o", str(out), "--json", *extra])
        assert res.exit_code == 0, res.output
        d = json.loads(res.stdout.strip().splitlines()[-1])
        t = pq.read_table(out)
        outs[name] = (d, sorted(zip(*[t.column(c).to_pylist() for c in t.column_names])))
    (d1, r1), (d2, r2) = outs["one"], outs["many"]
    for key in ("initial_count", "final_count", "added", "removed", "updates"):
        assert d1[key] == d2[key]
    assert r1 == r2 and len(r1) > 0
    assert d2["backend"] == "dask:cpu" and d2["distributed"]["replicas"] == 2
