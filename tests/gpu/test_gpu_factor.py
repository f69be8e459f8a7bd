"""Counts factored at a cut vertex (plan/factor.py, _factored.py) on the GPU engine: each
group's rooted plan (its root's candidates cut to one vertex) counted on the device; equal
to the reference engine's direct count."""
from __future__ import annotations

import pytest

pytest.importorskip("cupy", reason="the GPU engine needs CuPy")
pytestmark = [pytest.mark.gpu]

import warpmatch as wm  # noqa: E402
from warpmatch._factored import count_factored  # noqa: E402
from warpmatch.engine.gpu import GpuEngine  # noqa: E402
from warpmatch.engine.reference import ReferenceEngine  # noqa: E402
from warpmatch.graph.generators import erdos_renyi, random_labels, with_labels  # noqa: E402
from warpmatch.plan import build_plan  # noqa: E402
from warpmatch.plan.factor import factoring  # noqa: E402
from warpmatch.query.model import Query  # noqa: E402


@pytest.mark.parametrize("spec", [
    "s:0-a:1, a:1-b:2, b:2-s:0, s:0-c:3, c:3-d:4, d:4-e:3, e:3-s:0",
    "s:0-a:1, a:1-b:2, s:0-c:3, c:3-d:4, s:0-e:5",
])
def test_gpu_factored_counts_equal_the_reference(spec, monkeypatch):
    g = with_labels(erdos_renyi(400, p=0.05, seed=3), vertex_labels=random_labels(400, 6, seed=3))
    q = Query.parse(spec)
    plan = build_plan(g, q, purpose="count")
    want = ReferenceEngine().count(g, plan) * plan.multiplier
    emb, finished, info = count_factored(g, q, factoring(q), plan, GpuEngine())
    assert finished and emb == want and info["calls"] >= info["roots"]
    # through the API, factored at once
    monkeypatch.setenv("WARPMATCH_FACTOR_AFTER", "0")
    monkeypatch.setenv("WARPMATCH_HOMBASIS", "0")    # else the quotients' sum answers first
    r = wm.count_result(g, q, backend="gpu")
    assert r.count == want and r.factored is not None
