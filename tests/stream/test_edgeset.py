"""The sequential path's edge set (stream/_edgeset.py) against a Python dict."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from warpmatch.stream._edgeset import (E_BITS, EdgeSet, edge_key, es_delete, es_full, es_insert,
                                       es_slot)


@njit(cache=False)
def _apply(keys, vals, meta, a, b, op, lab, directed, out):
    """Insert (op +1) or delete (-1) each edge; out[i] = 1 if it was present before."""
    for i in range(a.shape[0]):
        key = edge_key(a[i], b[i], directed)
        slot, found = es_slot(keys, meta[E_BITS], key)
        out[i] = 1 if found else 0
        if op[i] > 0 and not found:
            if es_full(meta, keys):
                return i
            es_insert(keys, vals, meta, slot, key, lab[i])
        elif op[i] < 0 and found:
            out[i] = 10 + es_delete(keys, vals, meta, slot)
    return a.shape[0]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(ops=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.sampled_from([1, -1]),
                              st.integers(0, 5)), min_size=1, max_size=400),
       directed=st.booleans(), start=st.integers(0, 30), labeled=st.booleans())
def test_edge_set_matches_a_dict(ops, directed, start, labeled):
    # without labels the table keeps none (vals is empty) and every label reads 0
    if not labeled:
        ops = [(a, b, op, 0) for a, b, op, _ in ops]
    rng = np.random.default_rng(start)
    init = {}
    for _ in range(start):
        a, b = (int(x) for x in rng.integers(0, 41, 2))
        k = (a, b) if directed or a <= b else (b, a)
        init.setdefault(k, int(rng.integers(0, 5)) if labeled else 0)
    src = np.array([k[0] for k in init], np.int64)
    dst = np.array([k[1] for k in init], np.int64)
    es = EdgeSet(src, dst, np.array(list(init.values()), np.int32) if labeled else None,
                 directed)
    assert (es.vals.shape[0] > 0) == labeled
    ref = dict(init)
    arr = np.array(ops, np.int64).reshape(-1, 4)
    out = np.zeros(len(arr), np.int64)
    i = 0
    while i < len(arr):                   # grow when full, as the kernels' callers do
        j = _apply(es.keys, es.vals, es.meta, arr[i:, 0], arr[i:, 1], arr[i:, 2], arr[i:, 3],
                   directed, out[i:])
        i += j
        if i < len(arr):
            es.grow()
    for (a, b, op, lab), got in zip(ops, out.tolist()):
        k = (a, b) if directed or a <= b else (b, a)
        present = k in ref
        if op > 0:
            assert got == int(present)
            ref.setdefault(k, lab)
        else:
            assert got == (10 + ref[k] if present else 0)
            ref.pop(k, None)
    s, d, lab = es.edges()
    assert len(es) == len(ref)
    assert dict(zip(zip(s.tolist(), d.tolist()), lab.tolist())) == ref
