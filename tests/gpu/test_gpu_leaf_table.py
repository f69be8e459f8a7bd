"""GPU engine: labeled last leaves counted from a per-vertex table (issues 21 and 23;
``render.table_leaves``, ``render_leaves.render_table``, ``bfs.cu``'s ``wm_leaf_table``).

- Random graphs (vertex and edge labels, directed or not, candidate sets from anchors,
  both modes, induced or not) with a labeled tail or a fan of labeled leaves: the GPU count
  equals the reference engine's from a pool of roots (the DFS kernel counts at the depth
  before the leaves) and from a deep pool (a thread per pool row), with the plan's own
  module and the generic one, and with the table switched off.
- A power-law graph with a hub of degree 20,000 (80% label 0): labeled stars and a tailed
  triangle equal the CPU engine's counts.
- human's labeled queries whose last vertex is a refined leaf equal the CPU engine.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cupy", reason="the GPU engine needs CuPy")
pytestmark = [pytest.mark.gpu,
              pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")]

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import warpmatch as wm  # noqa: E402
from warpmatch.engine.cpu import CpuEngine  # noqa: E402
from warpmatch.engine.gpu.render import table_leaves, uses_table  # noqa: E402
from warpmatch.engine.reference import ReferenceEngine  # noqa: E402
from warpmatch.plan import build_plan  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from engine_helpers import graphs  # noqa: E402
from test_cpu_leaf_groups import fan_queries  # noqa: E402
from test_cpu_leaf_table import tailed  # noqa: E402
from test_gpu_leaf_groups import _gpu, _power_law  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CPU, REF = CpuEngine(), ReferenceEngine()


@SETTINGS
@given(data=st.data())
def test_gpu_table_counts_equal_the_reference(data) -> None:
    g = data.draw(graphs(nmax=14, labels=data.draw(st.sampled_from([True, True, None]))))
    q = data.draw(tailed(g) if data.draw(st.booleans()) else fan_queries(g))
    anchors = None
    if data.draw(st.booleans()):
        ids = st.lists(st.integers(0, g.n - 1), min_size=1, max_size=g.n, unique=True)
        anchors = {data.draw(st.integers(0, q.k - 1)): data.draw(ids)}
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "subgraphs"])),
                      induced=data.draw(st.sampled_from([False, False, True])),
                      anchors=anchors, purpose="count")
    want = REF.count(g, plan)
    used = plan.empty_reason is None and uses_table(plan, "twins")
    for threshold in (1, 10**8):
        for compile in ("specialised", "generic"):
            eng = _gpu(threshold, compile, "twins")
            assert eng.count(g, plan) == want, (threshold, compile)
            if used and eng.last_stats.get("module") is not None:
                assert eng.last_stats["leaf_table"], (threshold, compile)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WARPMATCH_LEAF_TABLE", "0")
        eng = _gpu(1, "specialised", "twins")
        assert eng.count(g, plan) == want
        assert not eng.last_stats.get("leaf_table")


HUB_LABELED = {
    "labeled 3-star": "c:1-a:0, c-b:0, c-d:0",
    "3-star, edge labels": "c:1-[1]-a:0, c-[1]-b:0, c-[1]-d:0",
    "labeled tail": "a:1-b:0, b-c:0, c-a, a-[0]-d:0",
    "two kinds of leaves": "c:1-a:0, c-b:0, c-d:1, c-e:1",
}


@pytest.mark.parametrize("name", list(HUB_LABELED))
def test_labeled_hub_leaves_equal_the_cpu(name) -> None:
    """Hub 0 (label 1) of degree 20,000: its table entry is one warp's long scan."""
    rng = np.random.default_rng(11)
    base = _power_law(rng, 30_000, 100_000, hub_degree=20_000)
    src, dst = base.edges()
    labels = (rng.random(base.n) < 0.2).astype(np.int64)
    labels[0] = 1
    g = wm.Graph.from_edges(src, dst, n=base.n, vertex_labels=labels,
                            edge_labels=rng.integers(0, 2, src.size), warn=False)
    q = wm.api.as_query(HUB_LABELED[name], g)
    for mode in ("embeddings", "subgraphs"):
        plan = build_plan(g, q, mode=mode, purpose="count")
        assert table_leaves(plan, "twins") is not None, "no table: the test would not test it"
        want = CPU.count(g, plan)
        for threshold in (1, 10**8):
            for compile in ("specialised", "generic"):
                eng = _gpu(threshold, compile, "twins")
                assert eng.count(g, plan) == want, (mode, threshold, compile)
                assert eng.last_stats["leaf_table"]


@pytest.mark.parametrize("name", ["query_dense_12_1", "query_dense_12_2",
                                  "query_sparse_12_2"])
def test_human_queries_with_a_table_leaf_equal_the_cpu(data_dir: Path, name: str) -> None:
    from warpmatch.query.io import read_query_file
    gpath = data_dir / "labeled" / "human" / "human.graph"
    if not gpath.exists():
        pytest.skip(f"shared data not found at {gpath}")
    g = wm.read_graph(gpath)
    plan = build_plan(g, read_query_file(gpath.parent / "query_graph" / f"{name}.graph"),
                      purpose="count")
    assert uses_table(plan, "twins")
    want = CPU.count(g, plan)
    for compile in ("specialised", "generic"):
        eng = _gpu(1, compile, "twins")
        assert eng.count(g, plan) == want, compile
        assert eng.last_stats["leaf_table"]
