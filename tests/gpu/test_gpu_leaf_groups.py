"""GPU engine: groups of bare leaves counted from list sizes and intersections (issue 21,
item 3; ``render.leaf_first``, ``render._group``).

- Random graphs (directed or not, labeled or not) with a fan of leaves on one vertex or
  two or three leaves of different vertices (``leaf_groups="all"``; the default counts
  the first kind only): the GPU count equals the reference engine's, from a pool of
  roots (the DFS kernel counts the group at the depth before it) and from a deep pool
  (one thread per pool row), in both modes, induced or not, and with listing plans (no
  restrictions: ``s (s-1) ... (s-j+1)``, not ``C(s, j)``), on the plan's own module and
  on the generic one.
- A power-law graph with a hub of degree 20,000: stars, the bull, STMatch's pattern 10
  and three leaves of a triangle equal the CPU engine's counts, with the plan's own
  module and with the generic one (the group read from its table), and (where it ends
  in time) with the default (alike leaves only) and with groups switched off.
- k-stars on email-Eu-core equal the closed form.
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
from warpmatch.engine.gpu.render import leaf_first  # noqa: E402
from warpmatch.engine.reference import ReferenceEngine  # noqa: E402
from warpmatch.graph.csr import Graph  # noqa: E402
from warpmatch.plan import build_plan  # noqa: E402
from warpmatch.query.model import Query  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from engine_helpers import graphs  # noqa: E402
from test_cpu_leaf_groups import fan_queries, mixed_queries  # noqa: E402

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CPU, REF = CpuEngine(), ReferenceEngine()


def _gpu(threshold: int, compile: str = "specialised", groups: str = "all") -> GpuEngine:
    """An engine that counts every group of bare leaves (``"all"``: the default counts
    only alike ones, and these tests check the rest too)."""
    eng = GpuEngine(pool_threshold=threshold, compile=compile, time_limit_s=120.0,
                    leaf_groups=groups)
    ok, why = eng.available()
    if not ok:
        pytest.skip(why)
    return eng


def _check_group_used(eng: GpuEngine, g: Graph, plan) -> None:
    """The engine counted the plan's bare group where it has one; nothing to check where
    the run ended before it began (``run.Run.trivially_empty``)."""
    if (plan.empty_reason is not None
            or (bool((plan.vlabel != -1).any()) and g.vertex_labels is None)
            or (bool((plan.bn_elabel != -1).any()) and g.edge_labels is None)):
        return
    first = leaf_first(plan, eng.leaf_groups)
    want = plan.k - first if first < plan.k - 1 else 0
    assert eng.last_stats["leaf_group"] == want


@pytest.mark.parametrize("shape", [fan_queries, mixed_queries], ids=["fan", "mixed"])
@SETTINGS
@given(data=st.data())
def test_gpu_leaf_groups_equal_the_reference(shape, data) -> None:
    g = data.draw(graphs(nmax=14))
    q = data.draw(shape(g))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    induced = data.draw(st.booleans())
    # a listing plan counts too: no symmetry restrictions, so alike leaves are not chained
    purpose = data.draw(st.sampled_from(["count", "list"]))
    plan = build_plan(g, q, mode=mode, induced=induced, purpose=purpose)
    want = REF.count(g, plan)
    for threshold in (1, 10**8):
        for compile in ("specialised", "generic"):
            eng = _gpu(threshold, compile)
            assert eng.count(g, plan) == want, (threshold, compile)
            _check_group_used(eng, g, plan)


def _power_law(rng: np.random.Generator, n: int, m: int, hub_degree: int) -> Graph:
    w = (np.arange(n) + 100.0) ** (-2.0 / 3.0)
    p = w / w.sum()
    src, dst = rng.choice(n, m, p=p), rng.choice(n, m, p=p)
    src = np.concatenate([src, np.zeros(hub_degree, np.int64)])
    dst = np.concatenate([dst, rng.choice(np.arange(1, n), hub_degree, replace=False)])
    return Graph.from_edges(src, dst, n=n, warn=False)


HUB_QUERIES = {
    "3-star": "c-a, c-b, c-d",
    "4-star": "c-a, c-b, c-d, c-e",
    "5-star": "c-a, c-b, c-d, c-e, c-f",
    "two tails": "a-b, b-c, c-a, a-x, a-y",
    "bull": "bull",
    "stmatch10": "0-1, 0-2, 0-3, 1-2, 1-3, 2-5, 3-4",
    "three horns": "a-b, b-c, c-a, a-x, b-y, c-z",
    "square, two tails": "a-b, b-c, c-d, d-a, a-x, c-y",
}


@pytest.mark.parametrize("name", list(HUB_QUERIES))
def test_hub_leaf_groups_equal_the_cpu(name) -> None:
    """A hub of degree 20,000 (5,000 for the square with two tails): the group's sets are
    long, their overlaps large."""
    # the square with two tails counts its tails' lists' intersection at the hub for every
    # partial match, one lane each: at degree 20,000 its variants took more than 200 s on
    # an H100, so its hub is smaller
    hub = 5_000 if name == "square, two tails" else 20_000
    g = _power_law(np.random.default_rng(5), 30_000, 100_000, hub_degree=hub)
    q = wm.api.as_query(HUB_QUERIES[name], g)
    for mode in ("embeddings", "subgraphs"):
        plan = build_plan(g, q, mode=mode)
        assert leaf_first(plan, "all") < plan.k - 1, "no group: the test would not test it"
        want = CPU.count(g, plan)
        for threshold in (1, 10**8):
            eng = _gpu(threshold)
            assert eng.count(g, plan) == want, (mode, threshold)
            _check_group_used(eng, g, plan)
    # the generic module reads the group from its table; without groups, the long way
    plan = build_plan(g, q)
    want = CPU.count(g, plan)
    for threshold in (1, 10**8):
        eng = _gpu(threshold, compile="generic")
        assert eng.count(g, plan) == want, threshold
        assert eng.last_stats["module"] == "generic"
        _check_group_used(eng, g, plan)
    # the default counts no bare leaves of different vertices: STMatch's pattern 10's are
    # enumerated (but the last); the bull's two horns and the triangle's third vertex are
    # independent vertices (render.indep_leaves), counted by the warp
    if name in ("bull", "stmatch10"):
        eng = GpuEngine(pool_threshold=1, compile="specialised", time_limit_s=120.0)
        assert eng.count(g, plan) == want
        assert eng.last_stats["leaf_group"] == (3 if name == "bull" else 0)
    if name in ("3-star", "bull"):         # elsewhere the long way takes too long at the hub
        eng = GpuEngine(pool_threshold=1, leaf_groups=False, time_limit_s=120.0)
        assert eng.count(g, plan) == want
        assert eng.last_stats["leaf_group"] == 0


def test_stars_on_email_eu_core_equal_the_closed_form(data_dir: Path) -> None:
    path = data_dir / "snap" / "email-Eu-core.txt"
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    with pytest.warns(Warning):
        g = wm.read_graph(str(path))
    deg = g.degree.astype(object)
    eng = _gpu(1)
    for j in (2, 3, 4, 5):
        q = Query.from_edges([(0, i) for i in range(1, j + 1)], k=j + 1)
        want = sum(int(np.prod([d - i for i in range(j)])) for d in deg if d >= j)
        plan = build_plan(g, q)
        assert eng.count(g, plan) * plan.multiplier == want
        assert eng.last_stats["leaf_group"] == j
