"""The CPU engine's program and state layout, and its sorted-list primitives.

Map: the program array's header and segments (``HEAD``, ``H_*``, ``S_*``) < the lanes'
state row (``ST_*``, :func:`state_width`) < :func:`_lower_bound`, :func:`_gallop` and
:func:`_intersect_count`.
Shared by the search (:mod:`._cpu_kernels`), the counted leaves (:mod:`._cpu_leaves`)
and the program's builder (:mod:`.cpu`); the stream engines use the binary search too.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: "no bound" for exclusive upper bounds and open-ended item slices
BIG = np.int64(1) << np.int64(62)

# The plan travels as one int64 "program" array (a handful of simple array
# arguments compile several times faster in numba than a tuple of 20 arrays):
# prog[0..4] = k, has_edge_labels, has_vertex_labels, number of backward edges,
# the cut rule (rule 8 of the Plan contract: CUT_OFF; CUT_UND, the prime data edge
# is {M[0], M[1]}; CUT_FWD / CUT_BWD, it is M[0] -> M[1] / M[1] -> M[0], directed);
# prog[5..8] = the leaf group counted from a list size (``engine.cpu._leaf_group``):
# its first depth (k: none), the (first) parent's depth, the direction of the (first)
# leaf's edge, and how to count (0: P(s, j); 1: C(s, j), the restrictions order the
# leaves in a chain; 2: leaves of different parents, by inclusion-exclusion,
# ``_leaf_mixed``); each leaf's parent, direction and labels are read from the plan's
# segments (``_leaf_fill``);
# prog[9] = rule 8's cut depth j (the depth of the prime edge's second vertex; 1 by
# default), prog[10] = 1 when the last depth is a plain leaf counted under rule 8 from the
# cut neighbours' lists (the kernels' ``cptr``/``cidx``);
# prog[11..12] = the twins counted from one intersection (``plan.leaves.twin_group``): their
# first depth (k: none; the kernels' last-depth fast path runs there where nothing but the
# edges is to check, else its scan counts the survivors) and how to count them (0: P(s, j);
# 1: C(s, j));
# prog[13] = 1 when the leaf group (chain 2) has members with several backward edges or a
# degree bound (``plan.leaves`` fifth case: independent vertices; ``_cpu_leaves._in_multi``);
# prog[HEAD + s] .. prog[HEAD + s + 1] delimit segment s (offsets into prog).
# Kernels read element j of segment s as prog[prog[HEAD + s] + j]: scalar
# offsets, because an array view made per call costs reference counting in
# the innermost loop (and a helper taking s would be compiled once per
# constant s, numba typing a constant argument as a literal).
# (a change here must touch the files of every compiled function that reads these
# constants, ``_cpu_kernels`` and ``_cpu_leaves``: numba's cache keys on their time stamps)
HEAD = 14
H_GRP0, H_GRP_P, H_GRP_DIR, H_GRP_CHAIN = 5, 6, 7, 8
H_CUT_DEPTH, H_CUT_LEAF = 9, 10
H_TWIN0, H_TWIN_CHAIN = 11, 12
H_GRP_MULTI = 13
CUT_OFF, CUT_UND, CUT_FWD, CUT_BWD = 0, 1, 2, 3
S_VLABEL, S_MIN_OUT, S_MIN_IN = 0, 1, 2
S_BN_PTR, S_BN_POS, S_BN_DIR, S_BN_ELABEL = 3, 4, 5, 6
S_NA_PTR, S_NA_POS, S_NA_DIR = 7, 8, 9
S_RES_PTR, S_RES_POS, S_RES_SIGN = 10, 11, 12
S_CAND_PTR, S_CAND_RESTRICTED, S_FAST_LAST, S_INJ_PTR, S_INJ_POS = 13, 14, 15, 16, 17
# failing sets (DP-iso): S_ANC[i] is the bit mask of the depths depth i's candidates depend
# on; S_FAILX = [failing set of a leaf group counted to 0, of a last depth counted to 0,
# pruning on (1) or off (0)]
S_ANC, S_FAILX = 18, 19
# S_LEAFX = [a leaf group is counted where the product of its sets' lengths is at least
# S_LEAFX[0] / 1000 times their sum plus the matched vertices (``_leaf_worth``), and
# independent vertices where the first one's set also holds S_LEAFX[1] entries]
S_LEAFX = 20
NSEG = 21
#: most query vertices with failing sets (a bit per depth; FS_PRUNED and -1 = "a match
#: was found below" use the high bits)
FS_MAX_K = 61
FS_PRUNED = np.int64(1) << np.int64(62)

# A lane's whole DFS state is one int64 row: depth, next item, then k-long
# blocks M, pos, end, hiv (exclusive upper bound from restrictions), gen
# (generator: backward-edge index, -1 = the candidate set), ccur (cursor in the
# candidate set), then one cursor per backward edge; then the failing sets' k-long
# blocks fs (the failing set gathered at each depth) and snap (the found counter when
# the depth was entered), the found counter (bumped by every match or non-zero count,
# so "a match below" is a comparison with snap), the parameters of up to LEAVES_MAX
# counted leaves (``_leaf_fill``), their sets' overlaps and the inclusion-exclusion's
# partial sums (``_leaf_mixed``; all scratch, not state), the twins' survivors so far
# (:data:`ST_TWINS`) and the scans a failing set ended (the row's last slot:
# :data:`ST_PRUNES`).
ST_D, ST_W, ST_HEAD = 0, 1, 2


#: a counted leaf's parameters in the state row (``_leaf_fill``): parent, direction, vertex
#: label, edge label, candidate range (2), and for an independent vertex of several
#: backward edges its depth and the edge its scan reads (-1: a plain leaf)
LEAF_W = 8
#: most leaves of a counted group of different vertices (``plan.leaves.MIXED_MAX``): the
#: state row holds their parameters, the ``2^j`` overlaps of their sets and as many partial
#: sums of the inclusion-exclusion (``_cpu_leaves._leaf_mixed``)
LEAVES_MAX = 7


def state_width(k: int, nbn: int) -> int:
    """Length of a lane's state row for a plan with ``k`` depths and ``nbn`` backward edges."""
    return ST_HEAD + 8 * k + max(nbn, 1) + 1 + LEAVES_MAX * LEAF_W + 2 * (1 << LEAVES_MAX) + 2


#: the state row's last slot: how many depth scans a failing set ended
ST_PRUNES = -1
#: the slot before it: the twins' survivors so far in the scan of their first depth, where
#: their checks need the scan (labels, candidate sets: ``_cpu_kernels``)
ST_TWINS = -2


@njit(cache=True, nogil=True)
def _lower_bound(arr, lo, hi, x):
    """First index in ``[lo, hi)`` with ``arr[index] >= x`` (``hi`` if none)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _gallop(arr, lo, hi, x):
    """Like :func:`_lower_bound`, but probing 1, 2, 4, ... steps from ``lo``.

    Costs O(log distance) instead of O(log length): the cursors of an
    intersection usually move a short way per candidate.
    """
    if lo >= hi or arr[lo] >= x:
        return lo
    prev = lo
    step = 1
    while True:
        nxt = prev + step
        if nxt >= hi:
            return _lower_bound(arr, prev + 1, hi, x)
        if arr[nxt] >= x:
            return _lower_bound(arr, prev + 1, nxt, x)
        prev = nxt
        step <<= 1


@njit(cache=True, nogil=True)
def _intersect_count(A, i, ie, B, j, je):
    """Size of the intersection of sorted ``A[i:ie]`` and ``B[j:je]``.

    A branch-free merge when the lengths are comparable; when ``B`` is much
    longer, a galloping search in it per element of ``A``.
    """
    if ie <= i or je <= j:
        return np.int64(0)
    j = _lower_bound(B, j, je, A[i])
    n = np.int64(0)
    if (je - j) > 16 * (ie - i):
        for z in range(i, ie):
            j = _gallop(B, j, je, A[z])
            if j == je:
                break
            if B[j] == A[z]:
                n += 1
        return n
    while i < ie and j < je:
        x = A[i]
        y = B[j]
        # advance whichever is smaller (both when equal) without branching
        i += x <= y
        j += y <= x
        n += x == y
    return n
