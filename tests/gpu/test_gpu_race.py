"""The GPU engine's order race: its search in RI's order, and beside it, in a thread, the CPU
engine's race of RI's order and the rival orders (``engine.race.count_beside``), the first to
answer stopping the other.

- On a random labeled graph, with the rivals starting at once: the count equals the
  reference engine's whichever search answers, and a limit gives a lower bound.
- Through the API on human's ``query_sparse_20_6``, where RI's order finds no match in 30 s
  on the CPU engine: ``count --limit 100000`` on the GPU answers within the time limit, and
  says which search did.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("cupy", reason="the GPU engine needs CuPy")
pytestmark = [pytest.mark.gpu,
              pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")]

import warpmatch as wm  # noqa: E402
from warpmatch.engine.cpu import CpuEngine  # noqa: E402
from warpmatch.engine.gpu import GpuEngine  # noqa: E402
from warpmatch.engine.race import count_beside, races_beside  # noqa: E402
from warpmatch.engine.reference import ReferenceEngine  # noqa: E402
from warpmatch.plan import build_plan  # noqa: E402
from warpmatch.query.model import Query  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from test_race import PATHY, TWINS, _labeled  # noqa: E402


@pytest.mark.parametrize("query", [PATHY, TWINS])
def test_gpu_count_beside_cpu_rivals_equals_the_reference(query):
    g = _labeled(400, 0.05, labels=3, seed=7)
    plan = build_plan(g, Query.parse(query), purpose="count", order="auto")
    want = ReferenceEngine().count(g, plan)
    gpu = GpuEngine()
    assert races_beside(gpu)
    raw, used = count_beside(gpu, g, plan, after=0.0, cpu=CpuEngine())
    assert raw == want
    assert gpu.last_stats["order"] == used.order_name
    raw, used = count_beside(gpu, g, plan, after=0.0, cpu=CpuEngine(),
                             stop=lambda c: c >= 2)
    assert min(2, want) <= raw <= want


def test_human_query_ri_cannot_start_is_answered_beside_the_gpu(data_path):
    from warpmatch.query.io import read_query_file
    human = data_path("labeled", "human")
    g = wm.read_graph(human / "human.graph")
    q = read_query_file(human / "query_graph" / "query_sparse_20_6.graph")
    r = wm.count_result(g, q, backend="gpu", limit=100_000, time_limit=60)
    assert r.partial is not None and r.partial.startswith("limit") and r.count >= 100_000
    # whichever answered first: the device (RI's order) or the CPU engine (RI's or a rival)
    assert r.plan.order_name == "auto" or r.raced_on == "cpu"
