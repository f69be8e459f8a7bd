"""Counts from the quotients' homomorphisms with numpy's eliminations on the GPU (CuPy;
_hombasis.py ``device=True``): equal to the reference engine on random labeled cases and
to a known count of a shipped human query, and chosen by a full count on the GPU engine."""
from __future__ import annotations

import math

import pytest

pytest.importorskip("cupy", reason="the device eliminations need CuPy")
pytestmark = [pytest.mark.gpu]

import warpmatch as wm  # noqa: E402
from warpmatch import _hombasis as H  # noqa: E402
from warpmatch._hombasis import count_hombasis  # noqa: E402
from warpmatch.api import as_query  # noqa: E402
from warpmatch.engine.reference import ReferenceEngine  # noqa: E402
from warpmatch.graph.generators import erdos_renyi, random_labels, with_labels  # noqa: E402
from warpmatch.plan import build_plan  # noqa: E402
from warpmatch.query.model import Query  # noqa: E402

CASES = [
    ("a:0-b:1, b:1-c:0, c:0-d:1, d:1-a:0, a:0-e:1, c:0-f:1, b:1-g:0", 2, 0.2),
    ("a:0-b:0, a:0-c:0, a:0-d:0, b:0-e:1, c:0-e:1", 2, 0.25),
    ("s:0-a:1, a:1-b:2, b:2-s:0, s:0-c:1, c:1-d:2, d:2-e:1", 3, 0.3),
]


@pytest.mark.parametrize("spec,labels,p", CASES)
def test_device_eliminations_equal_the_reference(spec, labels, p, monkeypatch):
    g = with_labels(erdos_renyi(60, p=p, seed=11), vertex_labels=random_labels(60, labels,
                                                                                seed=11))
    q = Query.parse(spec)
    plan = build_plan(g, q, purpose="count")
    want = ReferenceEngine().count(g, plan) * plan.multiplier
    # every elimination on the device, however small (CuPy's first kernels compile: no
    # time budget)
    monkeypatch.setattr(H, "DEVICE_MIN_FLOPS", 0)
    got, info = count_hombasis(g, q, kernel=False, device=True, budget_s=math.inf)
    assert got == want and info["numpy"] == info["quotients"]
    assert info["device"] >= info["quotients"]       # and the bound's
    # the kernel, with a scratch too small for any table: every quotient on the device
    monkeypatch.setattr(H, "KERNEL_POOL", 8)
    got, info = count_hombasis(g, q, kernel=True, device=True, budget_s=math.inf)
    assert got == want and info["numpy"] == info["quotients"] <= info["device"]
    # above the threshold only: these quotients are small, all on the host
    monkeypatch.setattr(H, "DEVICE_MIN_FLOPS", 1e12)
    got, info = count_hombasis(g, q, kernel=False, device=True, budget_s=math.inf)
    assert got == want and info["device"] == 0


def test_a_full_count_on_the_gpu_engine_eliminates_on_the_device(monkeypatch):
    monkeypatch.setenv("WARPMATCH_FACTOR_AFTER", "0")
    monkeypatch.setattr(H, "DEVICE_MIN_FLOPS", 0)
    monkeypatch.setattr(H, "HOM_BUDGET_S", math.inf)
    g = with_labels(erdos_renyi(50, p=0.2, seed=5), vertex_labels=random_labels(50, 3, seed=5))
    q = "a:0-b:1, b:1-c:2, c:2-a:0, c:2-d:1, d:1-e:0"
    res = wm.count_result(g, q, backend="gpu")
    assert res.count == wm.count_result(g, q, backend="reference").count
    assert res.hombasis is not None and res.hombasis["device"]


def test_human_query_with_a_known_count(data_path, monkeypatch):
    base = data_path("labeled", "human")          # skips where the data is absent
    g = wm.read_graph(base / "human.graph")
    q = as_query(str(base / "query_graph" / "query_sparse_16_7.graph"), g)
    # its 3,120 quotients are all under the threshold: every one on the device here
    monkeypatch.setattr(H, "DEVICE_MIN_FLOPS", 0)
    got = count_hombasis(g, q, budget_s=math.inf, kernel=False, device=True)
    # the factored search's count (bench/README, session 36), as in tests/plan
    assert got is not None and got[0] == 33_442_867_872 and got[1]["device"] > 0
