"""The multi-version graph's array store on the GPU (``warpmatch.stream.mvg_device`` with
CuPy): the model scenarios of tests/stream/test_mvg.py, and a power-law stream whose
neighbour lists equal the numpy store's at every batch."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

cp = pytest.importorskip("cupy", reason="the GPU store needs CuPy")
pytestmark = [pytest.mark.gpu]

from hypothesis import given, settings  # noqa: E402

from warpmatch.graph.generators import rmat  # noqa: E402
from warpmatch.stream.generate import make_stream  # noqa: E402
from warpmatch.stream.mvg_device import ArrayMultiVersionGraph  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "_mvg_model", Path(__file__).resolve().parents[1] / "stream" / "test_mvg.py")
_model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_model)


def _on_gpu(*a, **k):
    g = ArrayMultiVersionGraph(*a, xp=cp, **k)
    assert g.xp is cp
    return g


@settings(max_examples=60, deadline=None)
@given(case=_model.scenario())
def test_gpu_store_sees_every_snapshot(case):
    _model.run_scenario(_on_gpu, case)


@pytest.mark.parametrize("batch", [64, 2048])
def test_gpu_store_equals_numpy_on_a_power_law_stream(batch):
    g = rmat(12, 8, seed=4)
    g0, upd = make_stream(g, seed=4)
    src, dst = (x.astype(np.int64) for x in g0.edges())
    us, vs, ops = upd.src.astype(np.int64), upd.dst.astype(np.int64), upd.op.astype(np.int64)
    assert g0.ids is None
    stores = [ArrayMultiVersionGraph(g0.n, src, dst, xp=np), _on_gpu(g0.n, src, dst)]
    rng = np.random.default_rng(0)
    probe = rng.choice(g0.n, 100, replace=False).tolist()
    pending = []
    for lo in range(0, ops.size, batch):
        hi = min(ops.size, lo + batch)
        for s in stores:
            s.apply(us[lo:hi], vs[lo:hi], ops[lo:hi])
        pending.append(np.arange(lo + 1, hi + 1))
        # the oldest pending batch: each of its times read the same on both, then finished
        t = int(pending[0][rng.integers(pending[0].size)])
        for v in probe:
            assert (stores[0].neighbors(v, t).tolist()
                    == stores[1].neighbors(v, t).tolist()), (v, t)
        if len(pending) > 1:
            done = rng.permutation(pending.pop(0))
            for s in stores:
                s.finish(done)
    for done in pending:
        for s in stores:
            s.finish(done)
    for s in stores:
        s.compact()
    assert stores[0].entries() == stores[1].entries() == 2 * (
        src.size + int((ops > 0).sum()) - int((ops < 0).sum()))
    t = stores[0].time + 1
    for v in range(g0.n):
        assert stores[0].neighbors(v, t).tolist() == stores[1].neighbors(v, t).tolist()
