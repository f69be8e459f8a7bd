"""GPU engine: independent last vertices counted by the whole warp (issue 21, item 3;
``render.indep_leaves``, ``render_leaves.render_indep``, the generic ``wm_indep_warp``;
by default, and with ``GpuEngine(leaf_groups="all")``).

- Random graphs (sparse and dense, directed or not, labels and edge labels or not) with
  queries made of a core and two or three extra vertices adjacent to core vertices only
  (``test_cpu_independent.independent_queries``): the GPU count equals the reference
  engine's from a pool of roots (the DFS kernel counts them at the depth before, a warp
  per partial match) and from a deep pool (a warp per pool row, ``wm_bfs_leaf``), in
  both modes, induced or not, with the plan's own module and the generic one.
- A power-law graph with a hub of degree 20,000 (long lists; a shared list or a
  candidate set drives the scans): STMatch's patterns 3, 12 and 13 and labeled,
  edge-labeled and directed queries equal the CPU engine and the enumeration
  (``$WARPMATCH_INDEPENDENT=0``, and ``leaf_groups="alike"``).
- STMatch's patterns 3, 12 and 13 on email-Eu-core equal the CPU engine's counts.
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
from warpmatch.engine.gpu.render import indep_leaves  # noqa: E402
from warpmatch.engine.reference import ReferenceEngine  # noqa: E402
from warpmatch.plan import build_plan  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from engine_helpers import graphs  # noqa: E402
from test_cpu_independent import independent_queries  # noqa: E402
from test_cpu_twins import dense_graphs  # noqa: E402
from test_gpu_leaf_groups import _gpu as _leaf_gpu  # noqa: E402
from test_gpu_leaf_groups import _power_law  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CPU, REF = CpuEngine(), ReferenceEngine()


def _gpu(threshold: int, compile: str = "specialised"):
    """An engine that counts independent vertices (``leaf_groups="all"``; the default
    counts them too, ``render.indep_leaves``)."""
    return _leaf_gpu(threshold, compile, "all")


def _counted(g, plan) -> bool:
    """Whether the engine counts the plan's independent vertices (a plan the graph can
    match at all)."""
    return (plan.empty_reason is None and indep_leaves(plan, "all") is not None
            and not (bool((plan.vlabel != -1).any()) and g.vertex_labels is None)
            and not (bool((plan.bn_elabel != -1).any()) and g.edge_labels is None))


@SETTINGS
@given(data=st.data())
def test_gpu_independent_vertices_equal_the_reference(data) -> None:
    g = data.draw(st.one_of(graphs(nmax=14), dense_graphs()))
    q = data.draw(independent_queries(g, most=3))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    induced = data.draw(st.booleans())
    plan = build_plan(g, q, mode=mode, induced=induced, purpose="count")
    want = REF.count(g, plan)
    for threshold in (1, 10**8):
        for compile in ("specialised", "generic"):
            eng = _gpu(threshold, compile)
            assert eng.count(g, plan) == want, (threshold, compile)
            if _counted(g, plan):
                grp = indep_leaves(plan, "all")
                assert eng.last_stats["leaf_group"] == plan.k - grp.first


#: queries whose plans end in two or three independent vertices on the hub graph
HUB_INDEPENDENT = {
    "stmatch3": "0-1, 0-2, 0-4, 1-2, 1-3, 2-3, 2-4",
    "stmatch12": "0-1, 0-2, 0-3, 0-4, 1-2, 1-3, 1-4, 3-4, 4-5",
    "stmatch13": "0-1, 0-2, 0-3, 0-4, 0-5, 1-2, 1-3, 2-5, 3-4",
    "triangle, three on pairs": "a-b, b-c, c-a, x-a, x-b, y-b, y-c, z-a, z-c",
}
LABELED_INDEPENDENT = {
    "labels": "a:1-b:0, b-c:0, c-a, x:0-a, x-b, y:0-b, y-c",
    "edge labels": "a:1-b:0, b-c:0, c-a, x:0-[1]-a, x-[0]-b, y-[1]-b, y-c, z:0-a, z-c",
    "directed": "a:1->b, b->c, a->c, a->x:0, x->b, b->y:0, y->c",
}


def _hub_graph(labeled: bool, directed: bool = False) -> wm.Graph:
    rng = np.random.default_rng(11)
    base = _power_law(rng, 30_000, 100_000, hub_degree=20_000)
    if not labeled:
        return base
    src, dst = base.edges()
    labels = (rng.random(base.n) < 0.2).astype(np.int64)
    labels[0] = 1
    return wm.Graph.from_edges(src, dst, n=base.n, directed=directed, vertex_labels=labels,
                               edge_labels=rng.integers(0, 2, src.size), warn=False)


@pytest.mark.parametrize("name", list(HUB_INDEPENDENT) + list(LABELED_INDEPENDENT))
def test_hub_independent_vertices_equal_the_cpu_and_the_enumeration(name, monkeypatch) -> None:
    labeled = name in LABELED_INDEPENDENT
    g = _hub_graph(labeled, directed=name == "directed")
    q = wm.api.as_query((LABELED_INDEPENDENT if labeled else HUB_INDEPENDENT)[name], g)
    for mode in ("embeddings", "subgraphs"):
        plan = build_plan(g, q, mode=mode, purpose="count")
        grp = indep_leaves(plan, "all")
        assert grp is not None, "no independent vertices: the test would not test it"
        want = CPU.count(g, plan)
        for threshold in (1, 10**8):
            for compile in ("specialised", "generic"):
                eng = _gpu(threshold, compile)
                assert eng.count(g, plan) == want, (mode, threshold, compile)
                assert eng.last_stats["leaf_group"] == plan.k - grp.first
        with monkeypatch.context() as m:
            m.setenv("WARPMATCH_INDEPENDENT", "0")
            eng = _gpu(1)
            assert eng.count(g, plan) == want, mode
            assert indep_leaves(plan, "all") is None
        # the default counts them too; "alike" enumerates them
        assert _leaf_gpu(1, "specialised", "alike").count(g, plan) == want, mode


def test_stmatch_independent_patterns_on_email_eu_core_equal_the_cpu(data_dir: Path) -> None:
    path = data_dir / "snap" / "email-Eu-core.txt"
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    with pytest.warns(Warning):
        g = wm.read_graph(str(path), directed=False)
    eng = _gpu(1)
    for name in ("stmatch3", "stmatch12", "stmatch13"):
        plan = build_plan(g, wm.api.as_query(HUB_INDEPENDENT[name], g))
        assert indep_leaves(plan, "all") is not None, name
        assert eng.count(g, plan) == CPU.count(g, plan), name
