"""Counting the last depths of a search from set sizes: the CPU engine's leaf groups.

Map: the leaves' parameters in the state row (:func:`_leaf_fill`) < set membership
(:func:`_in_leaf_set`) < the sets' sizes and overlaps (:func:`_leaf_pass` per leaf,
:func:`_leaf_unmatch` for the matched vertices) < whether counting pays here, which
also writes the leaves' parameters (:func:`_leaf_worth`) < leaves of different vertices
(:func:`_leaf_mixed`) < the group (:func:`_leaf_group`; :mod:`._cpu_kernels` calls
:func:`_leaf_worth`, then it, at the group's first depth); and :func:`_leaf_count`, a
single last leaf's usable entries in one data vertex's list (the search keeps it per
vertex). Issue 21's counting without enumerating; :mod:`warpmatch.plan.leaves` says
where a group is exact.

How it differs from the papers: none of them counts leaves from set sizes; this is
exact inclusion-exclusion over the leaves' sets (labels, edge labels, candidate sets),
less the matched vertices.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# numba caches compiled functions by their own file's time stamp: these constants are
# compiled in, so a change of the program layout (``_cpu_prog``: HEAD is 14 since the
# independent vertices took a header slot) must also touch this file, or a cache keeps the
# old layout
from ._cpu_prog import (BIG, H_GRP_CHAIN, H_GRP_MULTI, HEAD, LEAF_W, LEAVES_MAX, S_BN_DIR,
                        S_BN_ELABEL, S_BN_POS, S_BN_PTR, S_CAND_PTR, S_CAND_RESTRICTED,
                        S_LEAFX, S_MIN_IN, S_MIN_OUT, S_VLABEL, ST_HEAD, _gallop,
                        _lower_bound)


@njit(cache=True, nogil=True, inline="always")
def _leaf_base(prog):
    """Where the state row keeps the leaves' parameters (:func:`state_width`)."""
    return ST_HEAD + 8 * prog[0] + max(prog[3], 1) + 1


@njit(cache=True, nogil=True, inline="always")
def _mask_base(lb):
    """Where the state row keeps the overlaps ``s[mask]`` (after the leaves' parameters);
    the inclusion-exclusion's partial sums follow them (``_leaf_mixed``)."""
    return lb + LEAF_W * LEAVES_MAX


@njit(cache=True, nogil=True, inline="always")
def _leaf_fill(st, b, m0, dd, prog, ip, iip):
    """Write leaf depth ``dd``'s parameters to ``st[b:b + LEAF_W]``: its parent (a data
    vertex), edge direction, vertex label and edge label (-1: any, also where the graph
    has no such labels), and its candidate set's range in ``cids`` (-1: none). An
    independent vertex of several backward edges, or with a degree bound (the program's
    ``H_GRP_MULTI``), is scanned from its shortest list: that edge is the "parent" here,
    and ``st[b + 6]`` = ``dd`` and ``st[b + 7]`` = that edge's index tell
    :func:`_in_multi` to test the others (``-1``: a plain leaf, nothing more to test)."""
    t0 = prog[prog[HEAD + S_BN_PTR] + dd]
    t = t0
    st[b + 6] = -1
    st[b + 7] = -1
    if prog[H_GRP_MULTI] != 0:
        t1 = prog[prog[HEAD + S_BN_PTR] + dd + 1]
        best = BIG
        for u in range(t0, t1):
            v = st[m0 + prog[prog[HEAD + S_BN_POS] + u]]
            ln = (ip[v + 1] - ip[v]) if prog[prog[HEAD + S_BN_DIR] + u] == 0 \
                else (iip[v + 1] - iip[v])
            if ln < best:
                best = ln
                t = u
        st[b + 6] = dd
        st[b + 7] = t
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
def _in_multi(z, st, b, m0, prog, ip, ix, iip, iix, el, iel):
    """For an independent vertex (``st[b + 6]`` its depth, else True at once): ``z`` meets
    its degree bounds and is in the lists of its backward neighbours other than the one
    its scan reads (``st[b + 7]``), with their edge labels."""
    dd = st[b + 6]
    if dd < 0:
        return True
    if (ip[z + 1] - ip[z] < prog[prog[HEAD + S_MIN_OUT] + dd]
            or iip[z + 1] - iip[z] < prog[prog[HEAD + S_MIN_IN] + dd]):
        return False
    for t in range(prog[prog[HEAD + S_BN_PTR] + dd], prog[prog[HEAD + S_BN_PTR] + dd + 1]):
        if t == st[b + 7]:
            continue
        v = st[m0 + prog[prog[HEAD + S_BN_POS] + t]]
        elab = prog[prog[HEAD + S_BN_ELABEL] + t] if prog[1] != 0 else np.int64(-1)
        if prog[prog[HEAD + S_BN_DIR] + t] == 0:
            q = _lower_bound(ix, ip[v], ip[v + 1], z)
            if q >= ip[v + 1] or ix[q] != z or (elab != -1 and el[q] != elab):
                return False
        else:
            q = _lower_bound(iix, iip[v], iip[v + 1], z)
            if q >= iip[v + 1] or iix[q] != z or (elab != -1 and iel[q] != elab):
                return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _in_leaf_set(z, st, b, m0, prog, ip, ix, iip, iix, el, iel, vl, cids):
    """True if data vertex ``z`` is in the set of the leaf whose parameters are at
    ``st[b:]``: in the parent's list (its direction), with the leaf's labels, in its
    candidate set (and an independent vertex's other lists and degree bounds:
    :func:`_in_multi`)."""
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
        if not (q < hi and ix[q] == z and (elab == -1 or el[q] == elab)):
            return False
    else:
        lo, hi = iip[par], iip[par + 1]
        q = _lower_bound(iix, lo, hi, z)
        if not (q < hi and iix[q] == z and (elab == -1 or iel[q] == elab)):
            return False
    return _in_multi(z, st, b, m0, prog, ip, ix, iip, iix, el, iel)


@njit(cache=True, nogil=True, inline="always")
def _leaf_pass(st, lb, i, j, sb, m0, prog, ip, ix, iip, iix, el, iel, vl, cids):
    """Scan leaf ``i``'s set ``S_i`` once (driven by the shorter of its parent's list and
    its candidate set) and add each entry ``z`` to ``st[sb + mask]`` for every mask whose
    lowest leaf is ``i`` and whose leaves (of the first ``j``) all hold ``z``: the later
    leaves are tested, the earlier ones counted ``z`` on their own pass."""
    b = lb + LEAF_W * i
    par, dr, lab, elab, clo, chi = st[b], st[b + 1], st[b + 2], st[b + 3], st[b + 4], st[b + 5]
    lo = ip[par] if dr == 0 else iip[par]
    hi = ip[par + 1] if dr == 0 else iip[par + 1]
    if i == j - 1 and lab == -1 and elab == -1 and clo < 0 and st[b + 6] < 0:
        st[sb + (1 << i)] += hi - lo        # nothing to filter or test: the list size
        return
    by_cand = clo >= 0 and chi - clo < hi - lo
    n = hi - lo if not by_cand else chi - clo
    cq = clo
    for t in range(n):
        # z is in the set driving the scan; test it against the rest of S_i only
        if by_cand:
            z = np.int64(cids[clo + t])
            if not _in_leaf_set(z, st, b, m0, prog, ip, ix, iip, iix, el, iel, vl, cids):
                continue
        else:
            z = np.int64(ix[lo + t]) if dr == 0 else np.int64(iix[lo + t])
            if lab != -1 and vl[z] != lab:
                continue
            if elab != -1 and (el[lo + t] if dr == 0 else iel[lo + t]) != elab:
                continue
            if clo >= 0:                # the list is sorted: a forward cursor in the set
                cq = _gallop(cids, cq, chi, z)
                if cq >= chi:
                    break
                if cids[cq] != z:
                    continue
            if not _in_multi(z, st, b, m0, prog, ip, ix, iip, iix, el, iel):
                continue
        r = 0                                         # the later leaves holding z
        for i2 in range(i + 1, j):
            if _in_leaf_set(z, st, lb + LEAF_W * i2, m0, prog, ip, ix, iip, iix, el, iel, vl,
                            cids):
                r |= 1 << i2
        sub = r                                       # masks whose lowest leaf is i
        while True:
            st[sb + (sub | (1 << i))] += 1
            if sub == 0:
                break
            sub = (sub - 1) & r


@njit(cache=True, nogil=True, inline="always")
def _leaf_unmatch(st, m0, d, lb, j, sb, prog, ip, ix, iip, iix, el, iel, vl, cids):
    """Take the matched vertices (depths ``0..d-1``) out of the sets and overlaps they
    are in (injective: each is in a match once)."""
    for x in range(d):
        z = st[m0 + x]
        m = 0
        for i in range(j):
            if _in_leaf_set(z, st, lb + LEAF_W * i, m0, prog, ip, ix, iip, iix, el, iel, vl,
                            cids):
                m |= 1 << i
        sub = m                                       # every overlap holding z
        while sub != 0:
            st[sb + sub] -= 1
            sub = (sub - 1) & m


@njit(cache=True, nogil=True)
def _leaf_worth(st, m0, d, k, prog, ip, iip):
    """Whether counting the leaf group at depth ``d`` beats enumerating it here.

    Counting scans each leaf's set once (the shorter of its parent's list and its
    candidate set) and tests each matched vertex against each leaf; enumerating costs
    about as many steps as there are completions, at most the product of those
    lengths. Tiny sets (a labeled query's refined leaves often have a handful of
    candidates) are enumerated: counting them cost 2.5-4x more (yeast
    ``query_sparse_16_1``). The threshold is the program's ``S_LEAFX``
    (``engine.cpu.LEAF_WORTH``). Writes the parameters of the leaves that
    :func:`_leaf_group` reads (all of a mixed group's, the first of an alike one).
    """
    lb = _leaf_base(prog)
    j = k - d
    mixed = prog[H_GRP_CHAIN] == 2
    nl = j if mixed else 1
    prod = 1.0
    tot = float(d * nl)                 # the matched vertices, tested against each leaf
    if mixed:
        tot += 3.0 ** j / 2             # the inclusion-exclusion over the 2^j overlaps
    for i in range(nl):
        b = lb + LEAF_W * i
        _leaf_fill(st, b, m0, d + i, prog, ip, iip)
        par = st[b]
        ln = (ip[par + 1] - ip[par]) if st[b + 1] == 0 else (iip[par + 1] - iip[par])
        if st[b + 4] >= 0 and st[b + 5] - st[b + 4] < ln:
            ln = st[b + 5] - st[b + 4]
        tot += ln * (j - i) if mixed else ln
        prod *= ln if mixed else float(ln) ** j
    if mixed and prod >= 4.0e18:
        # the sets' sizes multiplied: the count may not fit an int64, enumerate (time-limited)
        return False
    return prod * 1000.0 >= prog[prog[HEAD + S_LEAFX]] * tot


@njit(cache=True, nogil=True, inline="always")
def _set_reaches(st, b, m0, prog, need, ip, ix, iip, iix, el, iel, vl, cids):
    """Whether the set of the leaf (or independent vertex) at ``st[b:]`` holds at least
    ``need`` entries, matched vertices included: its scan stops as soon as it does, or as
    soon as the entries left cannot make up the difference."""
    par, dr, clo, chi = st[b], st[b + 1], st[b + 4], st[b + 5]
    lo = ip[par] if dr == 0 else iip[par]
    hi = ip[par + 1] if dr == 0 else iip[par + 1]
    by_cand = clo >= 0 and chi - clo < hi - lo
    n = hi - lo if not by_cand else chi - clo
    got = 0
    for t in range(n):
        if got >= need:
            break
        if got + (n - t) < need:
            return False
        if by_cand:
            z = np.int64(cids[clo + t])
        elif dr == 0:
            z = np.int64(ix[lo + t])
        else:
            z = np.int64(iix[lo + t])
        if _in_leaf_set(z, st, b, m0, prog, ip, ix, iip, iix, el, iel, vl, cids):
            got += 1
    return got >= need


@njit(cache=True, nogil=True)
def _leaf_mixed(st, m0, d, k, prog, ip, ix, iip, iix, el, iel, vl, cids):
    """The matches of depths ``d..k-1`` (2 to ``LEAVES_MAX`` leaves of possibly different
    matched vertices, no restriction among them): injective choices from the leaves' sets
    ``S_i`` by inclusion-exclusion over their overlaps (``plan.leaves``).

    All the overlaps ``s[mask] = |∩_{i in mask} S_i|`` come from one pass over each
    set (:func:`_leaf_pass`), then each matched vertex is tested against every leaf
    once and taken out of the masks it is in (:func:`_leaf_unmatch`). The leaves'
    parameters are in the state row already (:func:`_leaf_worth`). Then, over the subsets
    ``L`` of the leaves in increasing order, ``f[L]`` = the sum over the blocks ``B`` of
    ``L`` that hold its lowest leaf of ``(-1)^(|B|-1) (|B|-1)! s[B] f[L - B]`` (``f[{}] =
    1``): the sum over the set partitions of ``L``, ``3^j / 2`` terms in all; ``f`` of
    all the leaves is the count. Products may wrap around in int64 on the way; the
    result is exact wherever the count itself fits (``_leaf_worth`` enumerates where the
    sets' sizes multiplied might not). Independent vertices (``H_GRP_MULTI``) whose first
    set holds fewer than ``S_LEAFX[1]`` entries give -1: the kernel enumerates them.
    """
    j = k - d
    lb = _leaf_base(prog)
    if prog[H_GRP_MULTI] != 0 and not _set_reaches(st, lb, m0, prog,
                                                    prog[prog[HEAD + S_LEAFX] + 1], ip, ix,
                                                    iip, iix, el, iel, vl, cids):
        # independent vertices: their sets are intersections, often far shorter than the
        # lists _leaf_worth multiplied; enumerating them costs about |S_0| scans of the
        # later members' lists, so where the first set is smaller than S_LEAFX[1] they
        # are enumerated (-1), its scan having stopped there
        return np.int64(-1)
    sb = _mask_base(lb)                 # s[mask] at st[sb + mask]
    fb = sb + (1 << LEAVES_MAX)         # f[mask] at st[fb + mask]
    full = (1 << j) - 1
    for mask in range(full + 1):
        st[sb + mask] = 0
    for i in range(j):
        _leaf_pass(st, lb, i, j, sb, m0, prog, ip, ix, iip, iix, el, iel, vl, cids)
        if st[sb + (1 << i)] == 0:
            return np.int64(0)          # an empty set: no injective choice at all
    _leaf_unmatch(st, m0, d, lb, j, sb, prog, ip, ix, iip, iix, el, iel, vl, cids)
    st[fb] = 1
    for lset in range(1, full + 1):
        low = lset & -lset
        rest = lset ^ low
        acc = np.int64(0)
        sub = rest
        while True:
            blk = sub | low
            nb = 0
            x = blk
            while x != 0:
                x &= x - 1
                nb += 1
            coef = np.int64(1)          # (-1)^(nb-1) (nb-1)!
            for t in range(1, nb):
                coef *= -t
            acc += coef * st[sb + blk] * st[fb + (lset ^ blk)]
            if sub == 0:
                break
            sub = (sub - 1) & rest
        st[fb + lset] = acc
    return st[fb + full]


@njit(cache=True, nogil=True)
def _leaf_group(st, m0, d, k, prog, ip, ix, iip, iix, el, iel, vl, cids, ltab):
    """The matches of depths ``d..k-1``, leaves of one matched vertex, from its list.

    ``s`` = the entries of the parent's list that a leaf may take (its label, edge
    label and candidate set: the same for all of them) and that are not matched
    already; the ``j = k - d`` leaves take ``s (s-1) ... (s-j+1)`` injective values, or
    ``C(s, j)`` when the symmetry restrictions order them in a chain (one increasing
    choice per subset). Call it after :func:`_leaf_worth`, which writes the leaves'
    parameters to the state row. Where the search keeps the last leaf's table (``ltab``
    non-empty), the set's size before the matched vertices is the parent's slot (count
    + 1, 0: not yet; the leaves are alike, so it is the last leaf's count; restrictions
    among them do not change the set), filled here on first use.
    """
    if prog[H_GRP_CHAIN] == 2:
        return _leaf_mixed(st, m0, d, k, prog, ip, ix, iip, iix, el, iel, vl, cids)
    # the leaves are alike: s = |S| of the first less the matched ones
    lb = _leaf_base(prog)
    sb = _mask_base(lb)
    if ltab.size > 0:
        par = st[lb]
        lt = np.int64(ltab[par])
        if lt == 0:
            lt = 1 + _leaf_count(par, st[lb + 1], st[lb + 2], st[lb + 3],
                                 prog[prog[HEAD + S_MIN_OUT] + k - 1],
                                 prog[prog[HEAD + S_MIN_IN] + k - 1], st[lb + 4], st[lb + 5],
                                 ip, ix, iip, iix, el, iel, vl, cids)
            ltab[par] = lt
        st[sb + 1] = lt - 1
    else:
        st[sb + 1] = 0
        _leaf_pass(st, lb, 0, 1, sb, m0, prog, ip, ix, iip, iix, el, iel, vl, cids)
    _leaf_unmatch(st, m0, d, lb, 1, sb, prog, ip, ix, iip, iix, el, iel, vl, cids)
    s = st[sb + 1]
    return _choices(s, k - d, prog[H_GRP_CHAIN] == 1)


@njit(cache=True, nogil=True, inline="always")
def _choices(s, j, chain):
    """Injective choices of ``j`` alike vertices (a fan of leaves, twins) from a set of
    ``s``: ``C(s, j)`` when their restrictions order them in a chain, else
    ``s (s-1) ... (s-j+1)``."""
    if s < j:
        return np.int64(0)
    n = np.int64(1)
    if chain:
        for i in range(1, j + 1):           # exact at every step
            n = n * (s - j + i) // i
    else:
        for i in range(j):
            n *= s - i
    return n


@njit(cache=True, nogil=True, inline="always")
def _leaf_count(v, dr, lab, elab, min_out, min_in, c_lo, c_hi, ip, ix, iip, iix, el, iel,
                vl, cids):  # pragma: no cover - compiled
    """Entries ``z`` of data vertex ``v``'s list (direction ``dr``: 0 its out-list, 1 its
    in-list) that a last leaf may take: edge label ``elab`` and vertex label ``lab`` (-1:
    any), degrees at least ``min_out``/``min_in``, in ``cids[c_lo:c_hi]`` (``c_lo < 0``: no
    candidate set). The search keeps it per data vertex (``ltab``, filled on first use)."""
    lo = ip[v] if dr == 0 else iip[v]
    hi = ip[v + 1] if dr == 0 else iip[v + 1]
    n = 0
    cq = c_lo
    for e in range(lo, hi):
        z = np.int64(ix[e]) if dr == 0 else np.int64(iix[e])
        if elab != -1 and (el[e] if dr == 0 else iel[e]) != elab:
            continue
        if lab != -1 and vl[z] != lab:
            continue
        if ip[z + 1] - ip[z] < min_out or iip[z + 1] - iip[z] < min_in:
            continue
        if c_lo >= 0:                      # the list is sorted: a forward cursor in the set
            cq = _gallop(cids, cq, c_hi, z)
            if cq >= c_hi:
                break
            if cids[cq] != z:
                continue
        n += 1
    return n
