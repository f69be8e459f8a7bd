"""Counting the last depths of a search from set sizes: the CPU engine's leaf groups.

Map: the leaves' parameters in the state row (:func:`_leaf_fill`) < set membership
(:func:`_in_leaf_set`) < one set or overlap (:func:`_leaf_overlap`) < whether counting
pays here (:func:`_leaf_worth`) < leaves of different vertices (:func:`_leaf_mixed`) <
the group (:func:`_leaf_group`, called by :mod:`._cpu_kernels` at the group's first
depth). Issue 21's counting without enumerating; :mod:`warpmatch.plan.leaves` says
where a group is exact.

How it differs from the papers: none of them counts leaves from set sizes; this is
exact inclusion-exclusion over the leaves' sets (labels, edge labels, candidate sets),
less the matched vertices.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._cpu_prog import (BIG, H_GRP_CHAIN, HEAD, LEAF_W, S_BN_DIR, S_BN_ELABEL, S_BN_POS,
                        S_BN_PTR, S_CAND_PTR, S_CAND_RESTRICTED, S_LEAFX, S_VLABEL, ST_HEAD,
                        _gallop, _lower_bound)


@njit(cache=True, nogil=True, inline="always")
def _leaf_base(prog):
    """Where the state row keeps the leaves' parameters (:func:`state_width`)."""
    return ST_HEAD + 8 * prog[0] + max(prog[3], 1) + 1


@njit(cache=True, nogil=True, inline="always")
def _leaf_fill(st, b, m0, dd, prog):
    """Write leaf depth ``dd``'s parameters to ``st[b:b + LEAF_W]``: its parent (a data
    vertex), edge direction, vertex label and edge label (-1: any, also where the graph
    has no such labels), and its candidate set's range in ``cids`` (-1: none)."""
    t = prog[prog[HEAD + S_BN_PTR] + dd]
    st[b] = st[m0 + prog[prog[HEAD + S_BN_POS] + t]]
    st[b + 1] = prog[prog[HEAD + S_BN_DIR] + t]
    st[b + 2] = prog[prog[HEAD + S_VLABEL] + dd] if prog[2] != 0 else np.int64(-1)
    st[b + 3] = prog[prog[HEAD + S_BN_ELABEL] + t] if prog[1] != 0 else np.int64(-1)
    if prog[prog[HEAD + S_CAND_RESTRICTED] + dd] != 0:
        st[b + 4] = prog[prog[HEAD + S_CAND_PTR] + dd]
        st[b + 5] = prog[prog[HEAD + S_CAND_PTR] + dd + 1]
    else:
        st[b + 4] = -1
        st[b + 5] = -1


@njit(cache=True, nogil=True, inline="always")
def _in_leaf_set(z, st, b, ip, ix, iip, iix, el, iel, vl, cids):
    """True if data vertex ``z`` is in the set of the leaf whose parameters are at
    ``st[b:]``: in the parent's list (its direction), with the leaf's labels, in its
    candidate set."""
    lab = st[b + 2]
    if lab != -1 and vl[z] != lab:
        return False
    clo = st[b + 4]
    if clo >= 0:
        q = _lower_bound(cids, clo, st[b + 5], z)
        if q >= st[b + 5] or cids[q] != z:
            return False
    par = st[b]
    elab = st[b + 3]
    if st[b + 1] == 0:
        lo, hi = ip[par], ip[par + 1]
        q = _lower_bound(ix, lo, hi, z)
        return q < hi and ix[q] == z and (elab == -1 or el[q] == elab)
    lo, hi = iip[par], iip[par + 1]
    q = _lower_bound(iix, lo, hi, z)
    return q < hi and iix[q] == z and (elab == -1 or iel[q] == elab)


@njit(cache=True, nogil=True, inline="always")
def _leaf_overlap(st, m0, d, mask, lb, ip, ix, iip, iix, el, iel, vl, cids):
    """``|∩ S_i|`` over the leaves ``i`` in ``mask`` (bits 0..2; leaf ``i``'s parameters
    at ``st[lb + LEAF_W * i:]``): the entries of the shortest of their lists that are in
    every set, less the matched vertices (depths ``0..d-1``) that are (injective, so
    each once)."""
    best = -1
    blen = BIG
    by_cand = False                 # drive by a candidate set shorter than every list
    for i in range(3):
        if mask & (1 << i):
            b = lb + LEAF_W * i
            par = st[b]
            ln = (ip[par + 1] - ip[par]) if st[b + 1] == 0 else (iip[par + 1] - iip[par])
            if ln < blen:
                blen, best, by_cand = ln, i, False
            if st[b + 4] >= 0 and st[b + 5] - st[b + 4] < blen:
                blen, best, by_cand = st[b + 5] - st[b + 4], i, True
    bb = lb + LEAF_W * best
    bp, br = st[bb], st[bb + 1]
    lo = ip[bp] if br == 0 else iip[bp]
    hi = ip[bp + 1] if br == 0 else iip[bp + 1]
    if by_cand:
        n = np.int64(0)
        for t in range(st[bb + 4], st[bb + 5]):
            z = np.int64(cids[t])
            ok = True
            for i in range(3):
                if (mask & (1 << i)) and not _in_leaf_set(z, st, lb + LEAF_W * i, ip, ix, iip,
                                                          iix, el, iel, vl, cids):
                    ok = False
                    break
            if ok:
                n += 1
    elif mask == (1 << best) and st[bb + 2] == -1 and st[bb + 3] == -1 and st[bb + 4] < 0:
        n = np.int64(hi - lo)               # one leaf, nothing to filter: the list size
    else:
        n = np.int64(0)
        bl, be, clo, chi = st[bb + 2], st[bb + 3], st[bb + 4], st[bb + 5]
        cq = clo
        for t in range(lo, hi):
            z = ix[t] if br == 0 else iix[t]
            if bl != -1 and vl[z] != bl:
                continue
            if be != -1 and (el[t] if br == 0 else iel[t]) != be:
                continue
            if clo >= 0:                    # the list is sorted: a forward cursor
                cq = _gallop(cids, cq, chi, z)
                if cq >= chi:
                    break
                if cids[cq] != z:
                    continue
            ok = True
            for i in range(3):
                if i != best and (mask & (1 << i)) and not _in_leaf_set(
                        z, st, lb + LEAF_W * i, ip, ix, iip, iix, el, iel, vl, cids):
                    ok = False
                    break
            if ok:
                n += 1
    for x in range(d):
        z = st[m0 + x]
        ok = True
        for i in range(3):
            if (mask & (1 << i)) and not _in_leaf_set(z, st, lb + LEAF_W * i, ip, ix, iip,
                                                      iix, el, iel, vl, cids):
                ok = False
                break
        if ok:
            n -= 1
    return n


@njit(cache=True, nogil=True)
def _leaf_worth(st, m0, d, k, prog, ip, iip):
    """Whether counting the leaf group at depth ``d`` beats enumerating it here.

    Counting scans each leaf's set once (the shorter of its parent's list and its
    candidate set) and tests each matched vertex against each leaf; enumerating costs
    about as many steps as there are completions, at most the product of those
    lengths. Tiny sets (a labeled query's refined leaves often have a handful of
    candidates) are enumerated: counting them cost up to 2.5x more (yeast
    ``query_sparse_16_1``). The threshold is the program's ``S_LEAFX``
    (``engine.cpu.LEAF_WORTH``).
    """
    lb = _leaf_base(prog)
    j = k - d
    mixed = prog[H_GRP_CHAIN] == 2
    nl = j if mixed else 1
    prod = 1.0
    tot = float(d * nl)                 # the matched vertices, tested against each leaf
    for i in range(nl):
        b = lb + LEAF_W * i
        _leaf_fill(st, b, m0, d + i, prog)
        par = st[b]
        ln = (ip[par + 1] - ip[par]) if st[b + 1] == 0 else (iip[par + 1] - iip[par])
        if st[b + 4] >= 0 and st[b + 5] - st[b + 4] < ln:
            ln = st[b + 5] - st[b + 4]
        tot += ln
        prod *= ln if mixed else float(ln) ** j
    return prod * 1000.0 >= prog[prog[HEAD + S_LEAFX]] * tot


@njit(cache=True, nogil=True)
def _leaf_mixed(st, m0, d, k, prog, ip, ix, iip, iix, el, iel, vl, cids):
    """The matches of depths ``d..k-1`` (2 or 3 leaves of possibly different matched
    vertices, no restriction among them): injective choices from the leaves' sets
    ``S_i`` by inclusion-exclusion over their overlaps (``plan.leaves``).

    All the overlaps ``s[mask] = |∩_{i in mask} S_i|`` come from one pass over each
    set (driven by the shorter of its parent's list and its candidate set): an entry
    ``z`` of ``S_i`` is tested against the later leaves only and counts for every mask
    whose lowest leaf is ``i`` and whose leaves all hold ``z``; then each matched
    vertex is tested against every leaf once and taken out of the masks it is in.
    """
    j = k - d
    lb = _leaf_base(prog)
    sb = lb + LEAF_W * 3                # s[mask] at st[sb + mask], mask 1..7
    for i in range(j):
        _leaf_fill(st, lb + LEAF_W * i, m0, d + i, prog)
    for mask in range(8):
        st[sb + mask] = 0
    for i in range(j):
        b = lb + LEAF_W * i
        par, dr, clo, chi = st[b], st[b + 1], st[b + 4], st[b + 5]
        lo = ip[par] if dr == 0 else iip[par]
        hi = ip[par + 1] if dr == 0 else iip[par + 1]
        by_cand = clo >= 0 and chi - clo < hi - lo
        n = hi - lo if not by_cand else chi - clo
        lab, elab = st[b + 2], st[b + 3]
        cq = clo
        for t in range(n):
            # z is in the set driving the scan; test it against the rest of S_i only
            if by_cand:
                z = np.int64(cids[clo + t])
                if not _in_leaf_set(z, st, b, ip, ix, iip, iix, el, iel, vl, cids):
                    continue
            else:
                z = np.int64(ix[lo + t]) if dr == 0 else np.int64(iix[lo + t])
                if lab != -1 and vl[z] != lab:
                    continue
                if elab != -1 and (el[lo + t] if dr == 0 else iel[lo + t]) != elab:
                    continue
                if clo >= 0:            # the list is sorted: a forward cursor in the set
                    cq = _gallop(cids, cq, chi, z)
                    if cq >= chi:
                        break
                    if cids[cq] != z:
                        continue
            m = 1 << i
            for i2 in range(i + 1, j):
                if _in_leaf_set(z, st, lb + LEAF_W * i2, ip, ix, iip, iix, el, iel, vl,
                                cids):
                    m |= 1 << i2
            for mask in range(1 << i, 8):             # masks whose lowest leaf is i
                if (mask >> i) & 1 and (mask & ((1 << i) - 1)) == 0 and (mask & m) == mask:
                    st[sb + mask] += 1
        if st[sb + (1 << i)] == 0:
            return np.int64(0)          # an empty set: no injective choice at all
    for x in range(d):
        z = st[m0 + x]
        m = 0
        for i in range(j):
            if _in_leaf_set(z, st, lb + LEAF_W * i, ip, ix, iip, iix, el, iel, vl, cids):
                m |= 1 << i
        if m != 0:
            for mask in range(1, 8):
                if (mask & m) == mask:
                    st[sb + mask] -= 1
    s1, s2, s3 = st[sb + 1], st[sb + 2], st[sb + 3]
    if j == 2:
        return s1 * s2 - s3
    s4, s5, s6, s7 = st[sb + 4], st[sb + 5], st[sb + 6], st[sb + 7]
    return s1 * s2 * s4 - s3 * s4 - s5 * s2 - s6 * s1 + 2 * s7


@njit(cache=True, nogil=True)
def _leaf_group(st, m0, d, k, prog, ip, ix, iip, iix, el, iel, vl, cids):
    """The matches of depths ``d..k-1``, leaves of one matched vertex, from its list.

    ``s`` = the entries of the parent's list that a leaf may take (its label, edge
    label and candidate set: the same for all of them) and that are not matched
    already; the ``j = k - d`` leaves take ``s (s-1) ... (s-j+1)`` injective values, or
    ``C(s, j)`` when the symmetry restrictions order them in a chain (one increasing
    choice per subset).
    """
    if prog[H_GRP_CHAIN] == 2:
        return _leaf_mixed(st, m0, d, k, prog, ip, ix, iip, iix, el, iel, vl, cids)
    # the leaves are alike: s = |S| of the first less the matched ones
    lb = _leaf_base(prog)
    _leaf_fill(st, lb, m0, d, prog)
    s = _leaf_overlap(st, m0, d, 1, lb, ip, ix, iip, iix, el, iel, vl, cids)
    j = k - d
    if s < j:
        return np.int64(0)
    n = np.int64(1)
    if prog[H_GRP_CHAIN] == 1:
        for i in range(1, j + 1):           # C(s, j), exact at every step
            n = n * (s - j + i) // i
    else:
        for i in range(j):                  # s (s-1) ... (s-j+1)
            n *= s - i
    return n
