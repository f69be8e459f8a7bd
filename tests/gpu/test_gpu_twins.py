"""GPU engine: twins counted by the whole warp from one intersection (issue 21, item 3;
``render.twin_leaves``, ``render_leaves.render_twins``, ``GpuEngine(leaf_groups="twins")``).

- Random graphs (dense and sparse, directed or not, labeled or not) with twin queries
  (``test_cpu_twins.twin_queries``: twins with labels, edge labels and candidate sets
  too): the GPU count equals the reference engine's from a pool of roots (the DFS kernel
  counts the twins at the depth before them, a warp per partial match) and from a deep
  pool (one warp per pool row, ``wm_bfs_leaf``), in both modes, induced or not, with the
  plan's own module and the generic one (both count them).
- Labeled twins on a graph with a hub (long lists; the candidate set or a list drives
  the scan): both modules equal the CPU engine and the enumeration (``"alike"``).
- A power-law graph with a hub of degree 20,000: the diamond, K5 less an edge and K6
  less an edge equal the CPU engine's counts, with and without twins.
- gMatch's P3 and P8, K6 less an edge and K4 with two twins of an edge on email-Eu-core
  equal the CPU engine's counts.
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
from warpmatch.engine.gpu import GpuEngine  # noqa: E402
from warpmatch.engine.gpu.render import twin_leaves  # noqa: E402
from warpmatch.engine.reference import ReferenceEngine  # noqa: E402
from warpmatch.plan import build_plan  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from engine_helpers import graphs  # noqa: E402
from test_cpu_twins import dense_graphs, twin_queries  # noqa: E402
from test_gpu_leaf_groups import _gpu as _leaf_gpu  # noqa: E402
from test_gpu_leaf_groups import _power_law  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CPU, REF = CpuEngine(), ReferenceEngine()


def _gpu(threshold: int, compile: str = "specialised", groups: str = "twins") -> GpuEngine:
    """``test_gpu_leaf_groups._gpu`` with twins counted (and no mixed leaves) by default."""
    return _leaf_gpu(threshold, compile, groups)


def _counted(eng: GpuEngine, g, plan) -> bool:
    """Whether the plan has twins the engine would count (a plan the graph can match at
    all)."""
    return (plan.empty_reason is None and twin_leaves(plan, eng.leaf_groups) is not None
            and not (bool((plan.vlabel != -1).any()) and g.vertex_labels is None)
            and not (bool((plan.bn_elabel != -1).any()) and g.edge_labels is None))


@SETTINGS
@given(data=st.data())
def test_gpu_twins_equal_the_reference(data) -> None:
    g = data.draw(st.one_of(graphs(nmax=14), dense_graphs()))
    q = data.draw(twin_queries(g))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    induced = data.draw(st.booleans())
    plan = build_plan(g, q, mode=mode, induced=induced, purpose="count")
    want = REF.count(g, plan)
    for threshold in (1, 10**8):
        for compile in ("specialised", "generic"):
            eng = _gpu(threshold, compile)
            assert eng.count(g, plan) == want, (threshold, compile)
            if _counted(eng, g, plan):
                assert eng.last_stats["leaf_group"] == plan.k - twin_leaves(plan, "twins").first


HUB_TWINS = {
    "diamond": "diamond",
    "k5 less an edge": "a-b, a-c, b-c, a-d, b-d, c-d, a-e, b-e, c-e",
    "k6 less an edge": "a-b, a-c, a-d, b-c, b-d, c-d, a-e, b-e, c-e, d-e, a-f, b-f, c-f, d-f",
}


@pytest.mark.parametrize("name", list(HUB_TWINS))
def test_hub_twins_equal_the_cpu(name) -> None:
    """A hub of degree 20,000: long lists, one warp's long scan."""
    g = _power_law(np.random.default_rng(5), 30_000, 100_000, hub_degree=20_000)
    q = wm.api.as_query(HUB_TWINS[name], g)
    for mode in ("embeddings", "subgraphs"):
        plan = build_plan(g, q, mode=mode)
        assert twin_leaves(plan, "twins") is not None, "no twins: the test would not test it"
        want = CPU.count(g, plan)
        for threshold in (1, 10**8):
            eng = _gpu(threshold)
            assert eng.count(g, plan) == want, (mode, threshold)
            assert eng.last_stats["leaf_group"] == plan.k - twin_leaves(plan, "twins").first
        assert _gpu(1, groups="none").count(g, plan) == want


LABELED_TWINS = {
    "labels": "a:1-b:1, a-c:0, b-c:0, a-d:0, b-d:0",
    "edge labels": "a:1-b:1, a-[1]-c:0, b-[0]-c:0, a-[1]-d:0, b-[0]-d:0, a-[1]-e:0, b-[0]-e:0",
    "K4 and two": "a:1-b:0, a-c:0, b-c, a-d:0, b-d:0, c-d:0, a-e:0, b-e:0, c-e:0",
    "directed": "a:1->b:1, a-[1]->c:0, b->c:0, a-[1]->d:0, b->d:0",
}


@pytest.mark.parametrize("name", list(LABELED_TWINS))
def test_labeled_hub_twins_equal_the_cpu_and_the_enumeration(name) -> None:
    """Twins with a label, edge labels and candidate sets on a graph of 30,000 vertices
    with a hub of degree 20,000 (label 1; 80% of the others label 0; two edge labels):
    one warp scans the hub's list or the twins' candidate set and tests each entry
    (``wm_check_d{f}``)."""
    rng = np.random.default_rng(7)
    base = _power_law(rng, 30_000, 100_000, hub_degree=20_000)
    directed = name == "directed"
    src, dst = base.edges()
    labels = (rng.random(base.n) < 0.2).astype(np.int64)
    labels[0] = 1                                       # the hub: a twin's neighbour
    g = wm.Graph.from_edges(src, dst, n=base.n, directed=directed, vertex_labels=labels,
                            edge_labels=rng.integers(0, 2, src.size), warn=False)
    q = wm.api.as_query(LABELED_TWINS[name], g)
    for mode in ("embeddings", "subgraphs"):
        plan = build_plan(g, q, mode=mode, purpose="count")
        tw = twin_leaves(plan, "twins")
        assert tw is not None, "no twins: the test would not test it"
        want = CPU.count(g, plan)
        assert _gpu(1, groups="alike").count(g, plan) == want, mode
        for threshold in (1, 10**8):
            for compile in ("specialised", "generic"):
                eng = _gpu(threshold, compile)
                assert eng.count(g, plan) == want, (mode, threshold, compile)
                assert eng.last_stats["leaf_group"] == plan.k - tw.first


def test_twin_patterns_on_email_eu_core_equal_the_cpu(data_dir: Path) -> None:
    path = data_dir / "snap" / "email-Eu-core.txt"
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    with pytest.warns(Warning):
        g = wm.read_graph(str(path), directed=False)
    patterns = {
        "P3": "diamond",
        "P8": HUB_TWINS["k5 less an edge"],
        "K4, two twins of an edge": "0-1, 0-2, 0-3, 0-4, 0-5, 1-2, 1-3, 1-4, 1-5, 2-3",
        "K6 less an edge": HUB_TWINS["k6 less an edge"],
    }
    eng = _gpu(1)
    for name, text in patterns.items():
        plan = build_plan(g, wm.api.as_query(text, g))
        assert twin_leaves(plan, "twins") is not None, name
        assert eng.count(g, plan) == CPU.count(g, plan), name
