"""Every warpmatch error survives pickling (a worker process raises it, the client
re-raises it: Dask, multiprocessing), with its message and attributes, also the way Dask
pickles exceptions (tblib)."""
from __future__ import annotations

import pickle

import pytest

from warpmatch import errors as E


@pytest.mark.parametrize("err", [
    E.InputFormatError("edges.txt", 7, "expected 2 columns", "1 2 3 4"),
    E.InputFormatError("<array>", None, "update 1: insert of an existing edge"),
    E.QueryError("unknown pattern"), E.GraphError("int32 ids"),
    E.BackendUnavailableError("no GPU"), E.BudgetError("too small"),
    E.DistributedError("worker gone")])
@pytest.mark.parametrize("tblib", [False, True])
def test_errors_pickle(err, tblib):
    if tblib:       # Dask's way: tblib rebuilds an exception with cls.__new__, then attributes
        support = pytest.importorskip("tblib.pickling_support")
        support.install(type(err))
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and str(back) == str(err)
    for attr in ("path", "line", "text"):
        assert getattr(back, attr, None) == getattr(err, attr, None)
