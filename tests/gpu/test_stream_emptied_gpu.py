"""GPU delta engine on streams that empty vertices and refill them (issue 16), and on
an edge-labeled G0 without edges.

The scenarios and the oracle are those of ``tests/stream/test_emptied_vertices.py``
(hubs emptied with their row's capacity left behind, rows of capacity 0 from the
start, emptied and refilled within one batch and across batches, new vertices
emptied and refilled, the whole graph emptied and compacted, directed rows of
one direction), run on the GPU engine with its host-resident (pinned) storage
and each cache policy: the device mirror and the cache must follow rows that go
to degree 0 and come back. Needs CuPy and a CUDA device (``tests/conftest.py``
skips otherwise).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cupy", reason="the GPU delta engine needs CuPy")
pytestmark = pytest.mark.gpu

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stream"))
from test_edgeless_g0 import STREAM, updates_of  # noqa: E402
from test_emptied_vertices import (  # noqa: E402
    LABELS,
    QUERIES,
    check_against_oracle,
    college_msg_prefix,
    emptying_stream,
    labeled_query,
    replay_final,
)

import warpmatch as wm  # noqa: E402
from warpmatch.stream.gpu import pinned_allocator  # noqa: E402
from warpmatch.stream.matcher import ContinuousMatcher  # noqa: E402

#: cache policies: the whole graph mirrored on the device, none (zero-copy reads only),
#: the degree cache kept and refreshed in place, the random-walk estimate sampled on the GPU
POLICIES = [("device", {}), ("none", {}), ("degree", {}),
            ("random-walk", {"sample_rate": 1.0, "continue_rate": 1.0})]


@pytest.mark.parametrize("vlab,elab", LABELS)
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("policy,kw", POLICIES)
def test_gpu_emptied_rows_refilled_exactly(directed, vlab, elab, policy, kw):
    make = lambda: emptying_stream(1, directed, vlab, elab)[0]      # noqa: E731
    _, ups = emptying_stream(1, directed, vlab, elab)
    for text, induced in QUERIES[directed]:
        q = labeled_query(text, vlab, elab, directed)
        check_against_oracle(make, ups, q, induced, backend="gpu",
                             allocator=pinned_allocator(), cache=policy,
                             cache_fraction=0.3, sequential=False, **kw)


@pytest.mark.parametrize("policy", ["auto", "degree", "random-walk"])
def test_gpu_college_msg_one_week_window(data_path, policy):
    """Batch 4096 and batch 1 on the GPU give the CPU engine's per-update counts."""
    g0, ups = college_msg_prefix(data_path, 3000)
    final = replay_final(g0, ups)
    for q in ("triangle", "square"):
        cpu = ContinuousMatcher(g0, q, backend="cpu")
        (ref,) = [(d.plus_counts, d.minus_counts)
                  for d in cpu.apply_batches(ups, 4096, counts_only=True)]
        want = wm.count(final, q, backend="cpu")
        assert cpu.count == want > 0
        for batch in (4096, 1):
            cm = ContinuousMatcher(g0, q, backend="gpu", cache=policy, cache_fraction=0.2,
                                   sequential=False)     # (every batch on the device)
            got = [(d.plus_counts, d.minus_counts)
                   for d in cm.apply_batches(ups, batch, counts_only=True)]
            np.testing.assert_array_equal(np.concatenate([p for p, _ in got]), ref[0])
            np.testing.assert_array_equal(np.concatenate([m for _, m in got]), ref[1])
            assert cm.initial_count + cm.added - cm.removed == cm.count == want


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("policy", ["auto", "none"])
def test_gpu_labeled_stream_on_edgeless_tve_g0(tmp_path, directed, policy):
    """A t/v/e G0 without 'e' lines is edge-labeled: the GPU engine takes the labeled
    stream and lists the CPU engine's matches, update by update."""
    p = tmp_path / "g0.graph"
    p.write_text("t 4 0\nv 0 0\nv 1 0\nv 2 0\nv 3 0\n")
    g0 = wm.read_graph(p, directed=directed)
    q = "a-[3]->b, b->c" if directed else "a-[3]-b, b-c"
    for batch in (1, len(STREAM)):
        out = {}
        for backend in ("cpu", "gpu"):
            kw = {"cache": policy} if backend == "gpu" else {}
            cm = ContinuousMatcher(g0, q, backend=backend, **kw)
            assert cm.graph.has_edge_labels
            out[backend] = [
                (d.plus_counts.tolist(), d.minus_counts.tolist(),
                 sorted(zip(d.plus_update.tolist(), map(tuple, d.plus.tolist()))),
                 sorted(zip(d.minus_update.tolist(), map(tuple, d.minus.tolist()))))
                for d in cm.apply_batches(updates_of(STREAM), batch)]
            assert cm.count == wm.count(cm.graph.snapshot(), q, backend="cpu")
        assert out["gpu"] == out["cpu"]
        assert sum(sum(p) for p, *_ in out["cpu"]) > 0
