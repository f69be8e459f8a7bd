"""The local Dask cluster of 2 worker processes the distributed tests share (one per test
module; ``test_shards.py`` needs none and starts none)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed.client", reason="needs warpmatch[dist] (dask)")
    from warpmatch.distributed import local_cluster
    c = local_cluster(workers=2)
    yield c
    c.close()
    c.cluster.close()
