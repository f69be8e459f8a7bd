"""The GPU engine's generic module (render_generic.py) and ``compile="auto"`` (modules.py).

The generic module must give exactly what the plan-specialised one gives: the same
counts and rows for every rule of the Plan contract (hand-built plans against the
brute-force oracle), for planner-built plans against the CPU engine, and on the real
labeled data; one compiled module serves every plan of a size. ``auto`` runs a new plan
on the generic module and compiles its specialised module in the background, which the
next search of the same structure then uses.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cupy", reason="the GPU engine needs CuPy")
pytestmark = pytest.mark.gpu

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _plans import make_plan, oracle_matches  # noqa: E402
from test_gpu_engine import (_labeled_graph, _labeled_query, _power_law, _rows,  # noqa: E402
                             random_graph, random_query)

from warpmatch.engine.gpu import GpuEngine  # noqa: E402

SETTINGS = settings(max_examples=10, deadline=None, derandomize=True, database=None)


def _eng(**kw) -> GpuEngine:
    kw.setdefault("time_limit_s", 120.0)
    kw.setdefault("compile", "generic")
    eng = GpuEngine(**kw)
    ok, why = eng.available()
    if not ok:
        pytest.skip(why)
    return eng


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), directed=st.booleans(),
       vlabels=st.sampled_from([0, 2, 3]), elabels=st.sampled_from([0, 2]),
       k=st.integers(2, 6), induced=st.booleans())
def test_generic_executes_plan_contract(seed, directed, vlabels, elabels, k, induced):
    """Hand-built plans (random orders, candidate sets, restrictions): the oracle's count
    and rows, on the fine and coarse kernels, with and without a BFS phase."""
    rng = np.random.default_rng(seed)
    g = random_graph(rng, directed, vlabels, elabels)
    q = random_query(rng, k, directed, vlabels, elabels)
    plan = make_plan(g, q, rng, induced=induced, restrict_sets=bool(seed % 2), n_res=seed % 3)
    want = oracle_matches(g, plan)
    for kw in ({"pool_threshold": 100_000}, {"pool_threshold": 1},
               {"model": "coarse", "steal": False, "pool_threshold": 1}):
        eng = _eng(**kw)
        assert eng.count(g, plan) == len(want), kw
        assert eng.last_stats["module"] == "generic"
    eng = _eng(pool_threshold=1, list_rows=5)
    assert _rows(eng.match(g, plan, batch_size=3)) == sorted(want)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), directed=st.booleans(),
       vlabels=st.sampled_from([0, 3]), k=st.integers(2, 6), induced=st.booleans(),
       mode=st.sampled_from(["embeddings", "subgraphs"]))
def test_generic_equals_specialised_and_cpu(seed, directed, vlabels, k, induced, mode):
    """Planner-built plans: generic == specialised == cpu, count and list."""
    from warpmatch.engine import get_engine
    from warpmatch.plan import build_plan
    rng = np.random.default_rng(seed)
    g = random_graph(rng, directed, vlabels, 0, n=int(rng.integers(10, 40)))
    q = random_query(rng, k, directed, vlabels, 0)
    gen, spec = _eng(pool_threshold=1), _eng(pool_threshold=1, compile="specialised")
    plan = build_plan(g, q, mode=mode, induced=induced, purpose="count")
    want = get_engine("cpu").count(g, plan)
    assert gen.count(g, plan) == spec.count(g, plan) == want
    assert spec.last_stats["module"] == "specialised"
    lplan = build_plan(g, q, mode=mode, induced=induced, purpose="list")
    assert _rows(gen.match(g, lplan)) == _rows(get_engine("cpu").match(g, lplan))


@pytest.mark.parametrize("pattern", ["tailed-triangle", "4-star", "house", "4-clique",
                                     "5-cycle"])
def test_generic_power_law_and_leaf_counting(pattern):
    """A power-law graph with a hub: leaf counting (tailed triangle, star) and work
    stealing run on the generic module with the CPU engine's counts."""
    import warpmatch as wm
    from warpmatch.engine import get_engine
    from warpmatch.plan import build_plan
    g = _power_law(np.random.default_rng(5), 3000, 12000, hub_degree=300)
    plan = build_plan(g, wm.query.get_pattern(pattern), purpose="count")
    eng = _eng()
    assert eng.count(g, plan) == get_engine("cpu").count(g, plan)


def test_one_generic_module_per_size():
    """Two plans of the same size (different labels and edges) share one compiled module:
    the second search compiles nothing; interleaved listings keep their own plans."""
    import warpmatch as wm
    from warpmatch.engine import get_engine
    from warpmatch.plan import build_plan
    g = wm.graph.barabasi_albert(400, 5, seed=11)
    eng = _eng(list_rows=64)
    a = build_plan(g, wm.query.get_pattern("4-clique"), purpose="list")
    b = build_plan(g, wm.query.get_pattern("square"), purpose="list")
    pa = build_plan(g, wm.query.get_pattern("4-clique"), purpose="count")
    pb = build_plan(g, wm.query.get_pattern("square"), purpose="count")
    ca, cb = eng.count(g, pa) * pa.multiplier, eng.count(g, pb) * pb.multiplier
    assert eng.last_stats["compile_s"] == 0.0
    # two listings whose launches interleave: each must run on its own plan's table
    # (list plans enumerate every automorphic image: the count times its multiplier)
    ga, gb = eng.match(g, a, batch_size=16), eng.match(g, b, batch_size=16)
    ra, rb = [], []
    for x, y in zip(ga, gb):
        ra.append(x)
        rb.append(y)
    ra += list(ga)
    rb += list(gb)
    cpu = get_engine("cpu")
    assert _rows(ra) == _rows(cpu.match(g, a)) and len(_rows(ra)) == ca
    assert _rows(rb) == _rows(cpu.match(g, b)) and len(_rows(rb)) == cb


@pytest.mark.parametrize("name", ["yeast", "hprd"])
def test_generic_real_labeled_queries(data_path, name):
    """16-vertex shipped queries (dense and sparse): generic == specialised, capped."""
    from warpmatch.plan import build_plan
    g = _labeled_graph(data_path("labeled", name, f"{name}.graph"))
    gen, spec = _eng(), _eng(compile="specialised")
    for kind in ("dense", "sparse"):
        q = _labeled_query(data_path("labeled", name, "query_graph", f"query_{kind}_16_1.graph"))
        plan = build_plan(g, q, purpose="list")
        a = _rows(gen.match(g, plan, limit=5000))
        b = _rows(spec.match(g, plan, limit=5000))
        assert len(a) == len(b)
        if len(a) < 5000:
            assert a == b


def test_auto_generic_first_then_specialised(tmp_path, monkeypatch):
    """``compile="auto"``: a new structure runs generic at once and starts a background
    compile; once it has finished, the same structure runs specialised, read from
    CuPy's disk cache (a fresh one and fresh markers here)."""
    import warpmatch as wm
    from warpmatch.engine.gpu import modules
    from warpmatch.plan import build_plan
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "cupy"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(modules.ENV_BACKGROUND, "1")
    ba = wm.graph.barabasi_albert(300, 4, seed=3)
    s, d = ba.edges()
    g = wm.Graph.from_edges(s, d, n=ba.n, warn=False,
                            vertex_labels=np.random.default_rng(0).integers(0, 3, ba.n))
    # a structure no other test compiles in this process: a labeled house
    q = wm.query.parse_query("a:1-b:0, b-c:1, c-d:0, d-a, a-e:2, b-e")
    plan = build_plan(g, q, purpose="count")
    eng = _eng(compile="auto")
    first = eng.count(g, plan)
    assert eng.last_stats["module"] == "generic"
    procs = list(modules._RUNNING.values())
    assert procs, "no background compile was started"
    for p in procs:
        assert p.wait(timeout=300) == 0
    assert any((tmp_path / "xdg").rglob("*"))
    t = time.perf_counter()
    assert eng.count(g, plan) == first
    assert eng.last_stats["module"] == "specialised"
    assert time.perf_counter() - t < 5.0        # from the disk cache, not NVRTC
