"""numba kernels of the CPU engine: a resumable, iterative backtracking DFS.

The search is the classic backtracking of Ullmann / VF2 / RI (Bonnici et al.
2013, "A subgraph isomorphism algorithm and its application to biochemical
data", Alg. 1) executed over a :class:`~warpmatch.plan.Plan`: depth ``i``
extends a partial match ``M[0..i-1]`` by the candidates of query vertex
``order[i]``. What this module adds to the textbook algorithm:

- **Candidate generation by sorted-list intersection** (as in the
  set-intersection based matchers, e.g. STMatch/gMatch on GPUs and
  EmptyHeaded/GraphPi on CPUs): candidates are read from the *shortest*
  adjacency list among the backward neighbours (or from the depth's explicit
  candidate set, when that is shorter); every other backward neighbour keeps a
  cursor in its own sorted list that only moves forward, advanced by a
  galloping (exponential + binary) search, because candidates arrive in
  increasing order. No buffer sized by a degree is ever allocated, so a vertex
  of degree 10 million costs nothing extra in memory.
- **Symmetry-breaking restrictions cut the scan**: ``c > M[j]`` turns into a
  binary search for the first position of the scan, ``c < M[j]`` into the
  point where the scan stops.
- **Counting without descending into the last depth**: at depth ``k-1`` the
  survivors are counted; when the last depth has a single backward neighbour
  and nothing else to check, the count is the length of the (restriction
  clipped) list minus the earlier matched vertices found in it.
- **Counting a last leaf from a table**: when the last depth is a leaf of one matched
  vertex whose checks all concern the candidate alone (vertex label, edge label, degree,
  candidate set: a labeled query's usual last vertex), count mode scans a parent's list
  once per search and keeps how many entries pass them (``ltab``, one slot per data
  vertex, filled on first use: ``engine._cpu_leaves._leaf_count``), then takes out the
  matched vertices among them, instead of scanning the list for every partial match.
- **Counting a fan of leaves**: when the last ``j >= 2`` depths are plain leaves
  of one matched vertex (:func:`warpmatch.plan.leaves.leaf_group` says where this
  is exact), count mode adds ``s (s-1) ... (s-j+1)`` (or ``C(s, j)`` when the
  restrictions order them) for the ``s`` usable entries of its list (label, edge
  label and candidate set checked per entry), at the group's first depth,
  instead of descending (:mod:`._cpu_leaves`); two to seven leaves of different
  vertices (``LEAVES_MAX``) by inclusion-exclusion over their sets' overlaps, and so
  two to seven last vertices with no edge among them, each with its own intersection of
  lists (independent vertices: ``plan.leaves`` fifth case, ``H_GRP_MULTI``).
- **Counting twins**: when the last ``j >= 2`` depths have the same two or more
  backward neighbours (the common neighbours of a matched edge in a diamond:
  :func:`warpmatch.plan.leaves.twin_group`), the last depth's fast path runs at the
  first twin's depth and its count ``s`` becomes ``C(s, j)`` (restrictions in a chain)
  or ``s (s-1) ... (s-j+1)`` (``_cpu_leaves._choices``), instead of intersecting the lists again
  for every choice of the first twin. Where they carry labels, edge labels or a
  candidate set (the same for all of them), the scan of the first twin's depth counts
  its survivors instead of descending (the state row's ``ST_TWINS``) and adds their
  count when it ends.
- **Failing sets** (DP-iso, Han et al., SIGMOD 2019, §5): in a subtree without a
  match, each depth gathers the set of depths its failure depends on — a
  candidate list is a function of the depths it intersects with, is bounded by
  or must not touch (the program's ``S_ANC`` masks, closed transitively), and a
  candidate taken by an earlier depth adds that depth's mask. When a child's set
  lacks the current depth, every other candidate of that depth fails the same
  way, and its scan ends. A counted leaf group or last depth that counts 0 gives
  the masks of its depths and of the vertices they must differ from. Unlike
  DP-iso the sets are not computed over a candidate space with candidate
  edges, and pruning stops at depth 1 (a root's work is split over items and
  lanes); ``engine.cpu.failing_sets_wanted`` says where it is on (labeled
  graphs by default).
- **Resumable state**: the whole DFS state (depth, per-depth scan positions
  and ends, cursors, ``M``) lives in arrays, so a listing worker can stop when
  its output slice is full and continue on the next call; memory is bounded by
  the batch size however many matches one root has.
- **Bounded calls**: a lane also stops once it has done ``budget`` steps
  (candidate positions scanned, plus the list lengths of counted last
  depths), wherever it is in the tree. A numba parallel region cannot be
  interrupted, so the engine calls the kernel again and again with a budget
  sized to take a fraction of a second: between calls Python reports
  progress, handles Ctrl-C and SIGTERM, and checks ``--limit`` and
  ``--time-limit``, even inside the subtree of one hub. A step's cost varies with
  the region of the search (a position may fail at the first list or pass every
  test), so a call sized by the last one's speed can run far longer: the engine
  also arms a deadline (:mod:`~warpmatch.engine._watchdog`) that writes
  ``STOP_NOW`` to the flag, and every lane stops at its next resumable point.
- **Load balance**: the work is a list of *items* — a root plus a slice of the
  depth-1 scan positions, so one hub is split into many items — sorted by
  estimated cost (descending); lane ``t`` of ``T`` takes items ``t, t+T,
  t+2T, ...``, which spreads the heavy items evenly without atomics.

All array inputs are passed read-only (the engine makes read-only views), so
memory-mapped graphs and in-memory graphs share one compiled signature; the
only other signature dimension is the graph's index dtype (int32 or int64).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._cpu_prog import (  # noqa: F401  (the layout's names, also for importers of this module)
    BIG, HEAD, H_GRP0, H_GRP_P, H_GRP_DIR, H_GRP_CHAIN, H_CUT_DEPTH, H_CUT_LEAF, H_TWIN0,
    H_TWIN_CHAIN, H_GRP_MULTI, CUT_OFF,
    CUT_UND, CUT_FWD, CUT_BWD,
    S_VLABEL, S_MIN_OUT, S_MIN_IN, S_BN_PTR, S_BN_POS, S_BN_DIR, S_BN_ELABEL, S_NA_PTR,
    S_NA_POS, S_NA_DIR, S_RES_PTR, S_RES_POS, S_RES_SIGN, S_CAND_PTR, S_CAND_RESTRICTED,
    S_FAST_LAST, S_INJ_PTR, S_INJ_POS, S_ANC, S_FAILX, S_LEAFX, NSEG, FS_MAX_K, FS_PRUNED,
    ST_D, ST_W, ST_HEAD, state_width, LEAF_W, ST_PRUNES, _lower_bound, _gallop,
    _intersect_count)
from ._cpu_leaves import _choices, _leaf_count, _leaf_group, _leaf_worth
from ._watchdog import STOP_NOW


@njit(cache=True, nogil=True)
def _has_edge(ip, ix, iip, iix, u, v, direction):
    """True if ``v`` is in ``u``'s out-list (direction 0) or in-list (1)."""
    if direction == 0:
        lo, hi = ip[u], ip[u + 1]
        q = _lower_bound(ix, lo, hi, v)
        return q < hi and ix[q] == v
    lo, hi = iip[u], iip[u + 1]
    q = _lower_bound(iix, lo, hi, v)
    return q < hi and iix[q] == v


@njit(cache=True, nogil=True, inline="always")
def _edge_after(x, y, px, py, directed):
    """True if data edge ``x -> y`` (``{x, y}`` when undirected) comes after the prime
    edge ``px -> py`` in the fixed edge order (lexicographic on the ordered pair)."""
    if not directed and x > y:
        x, y = y, x
    return x > px or (x == px and y > py)


@njit(cache=True, nogil=True, inline="always")
def _prime(st, m0, d, c, cut, cdepth):
    """Rule 8's prime data edge ``(px, py)`` at depth ``d >= cdepth`` (``c`` is
    ``M[cdepth]`` when ``d == cdepth``), ordered as the edge order compares it."""
    m_0 = st[m0]
    m_j = c if d == cdepth else st[m0 + cdepth]
    if cut != CUT_BWD:
        px, py = m_0, m_j
    else:
        px, py = m_j, m_0
    if cut == CUT_UND and px > py:
        px, py = py, px
    return px, py


@njit(cache=True, nogil=True, inline="always")
def _cut_ok(st, m0, d, c, part, prog, o_bn_ptr, o_bn_pos, o_bn_dir, cut, cdepth):
    """Rule 8 (PBE's DupRemove): may ``c`` take depth ``d`` of an inter-partition search?

    Depth ``cdepth`` must cross partitions with ``M[0]`` (the prime data edge); every
    other matched edge that crosses partitions must come after the prime edge, so a
    match is found only from its smallest cut edge. The edges of depths before
    ``cdepth`` are checked at ``cdepth``, where the prime is known.
    """
    if d < cdepth:
        return True
    directed = cut != CUT_UND
    if d == cdepth and part[c] == part[st[m0]]:
        return False
    px, py = _prime(st, m0, d, c, cut, cdepth)
    prime_dir = 1 if cut == CUT_BWD else 0
    first = 1 if d == cdepth else d
    for dd in range(first, d + 1):
        y = c if dd == d else st[m0 + dd]
        pc = part[y]
        for t in range(prog[o_bn_ptr + dd], prog[o_bn_ptr + dd + 1]):
            pos = prog[o_bn_pos + t]
            mj = st[m0 + pos]
            if part[mj] == pc:
                continue
            dr = prog[o_bn_dir + t]
            if dd == cdepth and pos == 0 and (dr == prime_dir or not directed):
                continue                  # the prime edge itself
            if dr == 0:
                if not _edge_after(mj, y, px, py, directed):
                    return False
            elif not _edge_after(y, mj, px, py, directed):
                return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _cut_below(x, k0, k1, dr, directed):
    """``t`` such that the edge joining ``x`` and ``c`` (``x -> c`` when ``dr == 0``,
    ``c -> x`` when 1; ``{x, c}`` undirected) is at most ``(k0, k1)`` in the edge order
    iff ``c < t`` (``c != x``): that key only grows with ``c``, so the cut neighbours of
    ``x`` on either side of an edge are a prefix and a suffix of its sorted cut list."""
    if directed and dr == 1:
        return k0 + 1 if x <= k1 else k0                # key (c, x)
    if x < k0:
        return BIG
    if x == k0:
        return k1 + 1
    if directed:
        return np.int64(0)                              # key (x, c) > (k0, k1)
    return k0 + 1 if x <= k1 else k0                    # undirected, c < x


@njit(cache=True, nogil=True, inline="always")
def _cut_rank(cptr, cidx, x, dr, directed, v):
    """How many cut neighbours of ``x`` (out-list when ``dr == 0``, in-list when 1) are
    below ``v``."""
    off = (cptr.shape[0] >> 1) if (directed and dr == 1) else 0
    lo = cptr[off + x]
    hi = cptr[off + x + 1]
    return _lower_bound(cidx, lo, hi, v) - lo


@njit(cache=True, nogil=True, inline="always")
def _cut_limit(st, m0, d, prog, o_bn_ptr, o_bn_pos, o_bn_dir, part, x, dr, cut, cdepth):
    """The last depth ``d``'s plain leaf of ``x`` under rule 8: ``(t, keep)``. With
    ``keep`` False its candidates ``c < t`` among ``x``'s cut neighbours are excluded
    (their edge would come before the prime edge); with ``keep`` True (``d == cdepth``:
    the leaf's edge is the prime) only they are allowed (before every other cut edge)."""
    directed = cut != CUT_UND
    if d != cdepth:
        px, py = _prime(st, m0, d, np.int64(-1), cut, cdepth)
        return _cut_below(x, px, py, dr, directed), False
    # the smallest cut edge matched so far (none: every cut neighbour is allowed)
    k0 = BIG
    k1 = BIG
    for dd in range(1, d):
        y = st[m0 + dd]
        for t in range(prog[o_bn_ptr + dd], prog[o_bn_ptr + dd + 1]):
            mj = st[m0 + prog[o_bn_pos + t]]
            if part[mj] == part[y]:
                continue
            a, b = (mj, y) if prog[o_bn_dir + t] == 0 else (y, mj)
            if not directed and a > b:
                a, b = b, a
            if a < k0 or (a == k0 and b < k1):
                k0, k1 = a, b
    if k0 == BIG:
        return BIG, True
    return _cut_below(x, k0, k1, dr, directed), True


@njit(cache=True, nogil=True, inline="always")
def _fs_of_depth(st, d, o_fs, o_snap, o_found, anc_d):
    """The failing set of depth ``d``'s finished scan (-1: a match was found below)."""
    if st[o_found] != st[o_snap + d]:
        return np.int64(-1)
    f = st[o_fs + d]
    if f & FS_PRUNED:
        return f & ~FS_PRUNED         # a child's set without M[d]: passed up as it is
    return f | anc_d


@njit(cache=True, nogil=True, inline="always")
def _fs_child_done(st, d, f, o_fs, o_pos, o_end):
    """Depth ``d``'s current candidate was explored, with failing set ``f`` below it
    (-1: a match). A set without depth ``d``'s bit says every other candidate of
    depth ``d`` fails the same way (DP-iso): the scan of depth ``d`` ends."""
    fd = st[o_fs + d]
    if fd == -1:
        return
    if f == -1:
        st[o_fs + d] = -1
    elif (f >> d) & 1 == 0:
        st[o_fs + d] = f | FS_PRUNED
        st[o_pos + d] = st[o_end + d]
        st[st.shape[0] - 1] += 1          # ST_PRUNES
    else:
        st[o_fs + d] = fd | f


@njit(cache=True, nogil=True, inline="always")
def _fs_counted(st, d, n, f_zero, o_fs, o_pos, o_end, o_found):
    """Depth ``d``'s child was counted, not descended into: ``n`` matches (a match
    found below), or none, failing by ``f_zero`` (a leaf group's or last depth's set)."""
    if n > 0:
        st[o_found] += 1
        _fs_child_done(st, d, np.int64(-1), o_fs, o_pos, o_end)
    else:
        _fs_child_done(st, d, f_zero, o_fs, o_pos, o_end)


@njit(cache=True, nogil=True)
def _run_lane(lane_step, item_hi, item_root, item_a, item_b, roots,
              ip, ix, iip, iix, el, iel, vl, cids, prog, part, cptr, cidx, ltab, st, out, cap,
              count_only, budget, flag):
    """Run one lane's DFS over items ``st[ST_W], st[ST_W] + lane_step, ...`` below ``item_hi``.

    ``st[ST_D]`` is the current depth (-1: between items) and ``st[ST_W]`` the
    next item; the whole state is saved in ``st``, so a lane resumes where it
    stopped. Counting returns the raw count; listing writes up to ``cap`` rows
    to ``out`` and returns how many it wrote. Either stops early, at the next
    resumable point, once ``budget`` steps are done, and then sets ``flag[0]``;
    a lane that sees the flag set stops too once it has done an eighth of its
    budget (so lanes end a call together rather than wait for the slowest, and
    a lane that started late still moves on), or at once if the flag is
    ``STOP_NOW`` (the engine's deadline for the call, :mod:`._watchdog`).

    The depth initialisation and the candidate scan are written inline, in
    this one function, on purpose: numba increfs and decrefs every array
    argument of a call (atomics, shared by the lanes), which cost ~10x the
    actual search when each depth step was a call with ten array arguments.
    Only small helpers with few array arguments remain; LLVM inlines them and
    prunes their reference counting.
    """
    k = prog[0]
    has_elab = prog[1] != 0
    has_vlab = prog[2] != 0
    cut = prog[4]
    cdepth = prog[H_CUT_DEPTH]
    cut_leaf = prog[H_CUT_LEAF] != 0
    o_vlabel = prog[HEAD + S_VLABEL]
    o_min_out = prog[HEAD + S_MIN_OUT]
    o_min_in = prog[HEAD + S_MIN_IN]
    o_bn_ptr = prog[HEAD + S_BN_PTR]
    o_bn_pos = prog[HEAD + S_BN_POS]
    o_bn_dir = prog[HEAD + S_BN_DIR]
    o_bn_elabel = prog[HEAD + S_BN_ELABEL]
    o_na_ptr = prog[HEAD + S_NA_PTR]
    o_na_pos = prog[HEAD + S_NA_POS]
    o_na_dir = prog[HEAD + S_NA_DIR]
    o_res_ptr = prog[HEAD + S_RES_PTR]
    o_res_pos = prog[HEAD + S_RES_POS]
    o_res_sign = prog[HEAD + S_RES_SIGN]
    o_cand_ptr = prog[HEAD + S_CAND_PTR]
    o_restricted = prog[HEAD + S_CAND_RESTRICTED]
    o_fast_last = prog[HEAD + S_FAST_LAST]
    o_inj_ptr = prog[HEAD + S_INJ_PTR]
    o_inj_pos = prog[HEAD + S_INJ_POS]
    m0 = ST_HEAD              # M[i] is st[m0 + i]
    o_pos = m0 + k            # scan position per depth
    o_end = m0 + 2 * k        # scan end per depth
    o_hiv = m0 + 3 * k        # exclusive upper bound on candidates (restrictions)
    o_gen = m0 + 4 * k        # generator: backward-edge index, or -1 = candidate set
    o_ccur = m0 + 5 * k       # cursor in the depth's candidate set
    o_cur = m0 + 6 * k        # one cursor per backward edge
    o_fs = o_cur + max(prog[3], 1)    # failing set gathered per depth
    o_snap = o_fs + k                 # found counter when the depth was entered
    o_found = o_snap + k              # the found counter
    o_anc = prog[HEAD + S_ANC]
    o_failx = prog[HEAD + S_FAILX]
    use_fs = prog[o_failx + 2] != 0
    vlabel0 = prog[o_vlabel]
    check_vlab0 = has_vlab and vlabel0 != -1
    total = np.int64(0)
    nout = np.int64(0)
    steps = np.int64(0)
    d = st[ST_D]
    w = st[ST_W]
    # a lane stops only where no depth waits to be initialised (between items,
    # after a scan step or an emitted row), so `init` need not be saved
    init = False
    while True:
        # (a lane takes at least one step per call, so calls stopped by the deadline
        # still move the search on however late they start)
        if not init and (steps >= budget or (flag[0] != 0 and (
                8 * steps >= budget or (flag[0] == STOP_NOW and steps > 0)))):
            if flag[0] == 0:
                flag[0] = 1
            break
        a_off = np.int64(0)
        b_off = BIG
        if d < 0:
            # ---- next work item: a root and a slice of its depth-1 scan
            if w >= item_hi:
                break
            r = np.int64(roots[item_root[w]])
            a_off = item_a[w]
            b_off = item_b[w]
            w += lane_step
            steps += 1
            # rules 1-2 for the root (depth 0 has no backward edge or restriction)
            if check_vlab0 and vl[r] != vlabel0:
                continue
            if ip[r + 1] - ip[r] < prog[o_min_out] or iip[r + 1] - iip[r] < prog[o_min_in]:
                continue
            st[m0] = r
            if k == 1:
                if count_only:
                    total += 1
                else:
                    out[nout, 0] = r
                    nout += 1
                    if nout >= cap:
                        break
                continue
            d = 1
            init = True

        if init:
            init = False
            if use_fs:
                st[o_fs + d] = 0
                st[o_snap + d] = st[o_found]
            if count_only and d == prog[H_GRP0] and _leaf_worth(st, m0, d, k, prog, ip, iip):
                # ---- the last depths are leaves of one matched vertex: count them (at
                # depth 1 once per root: a root's other items are slices of the same list;
                # the choice depends on M[0..d-1] only, so all of a root's items agree;
                # an alike group's set size comes from the last leaf's table, if any)
                n_grp = np.int64(0)
                if d > 1 or a_off == 0:
                    n_grp = _leaf_group(st, m0, d, k, prog, ip, ix, iip, iix, el, iel, vl,
                                        cids, ltab)
                v = st[m0 + prog[H_GRP_P]]
                steps += 1 + ((ip[v + 1] - ip[v]) if prog[H_GRP_DIR] == 0
                              else (iip[v + 1] - iip[v]))
                # -1: independent vertices whose first set turned out too small to pay
                # (_cpu_leaves._leaf_mixed): enumerated below, as if no group were here
                if n_grp >= 0:
                    total += n_grp
                    d -= 1
                    if d == 0:
                        d = -1
                    elif use_fs:
                        _fs_counted(st, d, n_grp, prog[o_failx], o_fs, o_pos, o_end,
                                    o_found)
                    continue
            if count_only and d == k - 1 and ltab.size > 0 and ltab[ltab.size - 1] != 0:
                # ---- counting, the last depth is a leaf whose checks all concern the
                # candidate alone (label, edge label, degree, candidate set; no
                # restriction or non-edge, engine.cpu.leaf_table_wanted; the table's
                # last slot says so): its parent's usable entries are counted once per
                # data vertex (ltab, count + 1; 0: not yet), so the count is that less the
                # matched vertices among them
                t0 = prog[o_bn_ptr + d]
                v = st[m0 + prog[o_bn_pos + t0]]
                dr = prog[o_bn_dir + t0]
                want_e = prog[o_bn_elabel + t0] if has_elab else -1
                want_v = prog[o_vlabel + d]
                c_lo = prog[o_cand_ptr + d]
                c_hi = prog[o_cand_ptr + d + 1]
                lt = np.int64(ltab[v])
                if lt == 0:               # first use of v: scan its list once (a race
                    # between lanes writes the same value twice)
                    lt = 1 + _leaf_count(v, dr, want_v if has_vlab else -1, want_e,
                                         prog[o_min_out + d], prog[o_min_in + d],
                                         c_lo if prog[o_restricted + d] != 0 else -1, c_hi,
                                         ip, ix, iip, iix, el, iel, vl, cids)
                    ltab[v] = lt
                    steps += (ip[v + 1] - ip[v]) if dr == 0 else (iip[v + 1] - iip[v])
                n_last = lt - 1
                # failing set of a zero count: this depth's own, and that of every matched
                # vertex that took one of the entries (as the scan would gather them)
                f_zero = prog[o_anc + d]
                for x in range(prog[o_inj_ptr + d], prog[o_inj_ptr + d + 1]):
                    z = st[m0 + prog[o_inj_pos + x]]
                    if has_vlab and want_v != -1 and vl[z] != want_v:
                        continue
                    if (ip[z + 1] - ip[z] < prog[o_min_out + d]
                            or iip[z + 1] - iip[z] < prog[o_min_in + d]):
                        continue
                    if prog[o_restricted + d] != 0:
                        q = _lower_bound(cids, c_lo, c_hi, z)
                        if q >= c_hi or cids[q] != z:
                            continue
                    if dr == 0:
                        q = _lower_bound(ix, ip[v], ip[v + 1], z)
                        if q >= ip[v + 1] or ix[q] != z or (want_e != -1 and el[q] != want_e):
                            continue
                    else:
                        q = _lower_bound(iix, iip[v], iip[v + 1], z)
                        if (q >= iip[v + 1] or iix[q] != z
                                or (want_e != -1 and iel[q] != want_e)):
                            continue
                    n_last -= 1
                    f_zero |= prog[o_anc + prog[o_inj_pos + x]]
                total += n_last
                steps += 1 + prog[o_inj_ptr + d + 1] - prog[o_inj_ptr + d]
                d -= 1
                if use_fs:
                    _fs_counted(st, d, n_last, f_zero, o_fs, o_pos, o_end, o_found)
                continue
            # ---- initialise depth d: restriction bounds, generator, cursors
            lo_val = np.int64(0)
            hi_val = BIG
            for t in range(prog[o_res_ptr + d], prog[o_res_ptr + d + 1]):
                mj = st[m0 + prog[o_res_pos + t]]
                if prog[o_res_sign + t] > 0:
                    if mj + 1 > lo_val:
                        lo_val = mj + 1
                elif mj < hi_val:
                    hi_val = mj
            # the generator: the shortest backward-neighbour list, or the
            # candidate set when that is shorter (anchors)
            best = -1
            best_len = BIG
            for t in range(prog[o_bn_ptr + d], prog[o_bn_ptr + d + 1]):
                v = st[m0 + prog[o_bn_pos + t]]
                if prog[o_bn_dir + t] == 0:
                    ln = ip[v + 1] - ip[v]
                    st[o_cur + t] = ip[v]
                else:
                    ln = iip[v + 1] - iip[v]
                    st[o_cur + t] = iip[v]
                if ln < best_len:
                    best_len = ln
                    best = t
            c_lo = prog[o_cand_ptr + d]
            c_hi = prog[o_cand_ptr + d + 1]
            if prog[o_restricted + d] != 0 and c_hi - c_lo < best_len:
                best = -1
            if best == -1:
                base = c_lo
                e = c_hi
            else:
                base = st[o_cur + best]
                v = st[m0 + prog[o_bn_pos + best]]
                e = ip[v + 1] if prog[o_bn_dir + best] == 0 else iip[v + 1]
            if b_off < e - base:
                e = base + b_off
            s = base + a_off
            if s > e:
                s = e
            if lo_val > 0 and s < e:
                if best == -1:
                    s = _lower_bound(cids, s, e, lo_val)
                elif prog[o_bn_dir + best] == 0:
                    s = _lower_bound(ix, s, e, lo_val)
                else:
                    s = _lower_bound(iix, s, e, lo_val)
            if hi_val <= lo_val:
                s = e
            st[o_gen + d] = best
            st[o_ccur + d] = c_lo
            if (count_only and (d == k - 1 or d == prog[H_TWIN0]) and prog[o_fast_last + d] != 0
                    and best >= 0):
                # counting, last depth, nothing to check but the backward
                # edges: count the intersection of the lists directly, then
                # take out the earlier matched vertices found in it (injectivity)
                g_arr = ix if prog[o_bn_dir + best] == 0 else iix
                q = _lower_bound(g_arr, s, e, hi_val)
                t0 = prog[o_bn_ptr + d]
                t1 = prog[o_bn_ptr + d + 1]
                # rule 8 (a plain leaf only, prog[H_CUT_LEAF]): the cut neighbours below t
                # are excluded (keep False) or the only ones allowed (keep True)
                cut_t = BIG
                keep = False
                xp = np.int64(-1)
                if cut_leaf:
                    xp = st[m0 + prog[o_bn_pos + t0]]
                    xdr = prog[o_bn_dir + t0]
                    cut_t, keep = _cut_limit(st, m0, d, prog, o_bn_ptr, o_bn_pos, o_bn_dir,
                                             part, xp, xdr, cut, cdepth)
                    top = hi_val if hi_val < cut_t else cut_t
                    n_cut = np.int64(0)
                    if top > lo_val:
                        n_cut = (_cut_rank(cptr, cidx, xp, xdr, cut != CUT_UND, top)
                                 - _cut_rank(cptr, cidx, xp, xdr, cut != CUT_UND, lo_val))
                    n_last = n_cut if keep else q - s - n_cut
                elif t1 - t0 == 1:
                    n_last = q - s
                elif t1 - t0 == 2:
                    t = t0 if t0 != best else t0 + 1
                    v = st[m0 + prog[o_bn_pos + t]]
                    if prog[o_bn_dir + t] == 0:
                        n_last = _intersect_count(g_arr, s, q, ix, st[o_cur + t], ip[v + 1])
                    else:
                        n_last = _intersect_count(g_arr, s, q, iix, st[o_cur + t], iip[v + 1])
                else:
                    n_last = 0
                    for z in range(s, q):
                        c = g_arr[z]
                        ok = True
                        for t in range(t0, t1):
                            if t == best:
                                continue
                            v = st[m0 + prog[o_bn_pos + t]]
                            if prog[o_bn_dir + t] == 0:
                                y = _gallop(ix, st[o_cur + t], ip[v + 1], c)
                                st[o_cur + t] = y
                                ok = y < ip[v + 1] and ix[y] == c
                            else:
                                y = _gallop(iix, st[o_cur + t], iip[v + 1], c)
                                st[o_cur + t] = y
                                ok = y < iip[v + 1] and iix[y] == c
                            if not ok:
                                break
                        if ok:
                            n_last += 1
                for x in range(prog[o_inj_ptr + d], prog[o_inj_ptr + d + 1]):
                    v = st[m0 + prog[o_inj_pos + x]]
                    y = _lower_bound(g_arr, s, q, v)
                    ok = y < q and g_arr[y] == v
                    for t in range(t0, t1):
                        if not ok:
                            break
                        if t != best:
                            ok = _has_edge(ip, ix, iip, iix, st[m0 + prog[o_bn_pos + t]], v,
                                           prog[o_bn_dir + t])
                    if ok and cut_leaf:
                        # a matched vertex among the cut neighbours below t was counted
                        # (keep) or taken out (not keep) with them
                        ok = (part[v] != part[xp] and v < cut_t) == keep
                    if ok:
                        n_last -= 1
                f_zero = prog[o_failx + 1]
                if d < k - 1:
                    # the twins at depths d..k-1 (plan.leaves.twin_group) share this set:
                    # C(s, j) injective choices where restrictions chain them, else
                    # s (s-1) ... (s-j+1); fails as a leaf group does
                    n_last = _choices(n_last, k - d, prog[H_TWIN_CHAIN] != 0)
                    f_zero = prog[o_failx]
                total += n_last
                steps += q - s + 1
                d -= 1
                if d == 0:
                    d = -1
                elif use_fs:
                    _fs_counted(st, d, n_last, f_zero, o_fs, o_pos, o_end, o_found)
                continue
            st[o_pos + d] = s
            st[o_end + d] = e
            st[o_hiv + d] = hi_val

        # ---- advance depth d's scan to its next valid candidate (rules 1-7)
        p = st[o_pos + d]
        e = st[o_end + d]
        hi = st[o_hiv + d]
        g = st[o_gen + d]
        g_dir = 0
        g_lab = -1
        if g >= 0:
            g_dir = prog[o_bn_dir + g]
            if has_elab:
                g_lab = prog[o_bn_elabel + g]
        want_v = prog[o_vlabel + d]
        check_vlab = has_vlab and want_v != -1
        min_out = prog[o_min_out + d]
        min_in = prog[o_min_in + d]
        check_cand = g >= 0 and prog[o_restricted + d] != 0
        c_end = prog[o_cand_ptr + d + 1]
        t0 = prog[o_bn_ptr + d]
        t1 = prog[o_bn_ptr + d + 1]
        found = np.int64(-1)
        p0 = p
        rest_dead = False             # no later candidate fits: the scan is over
        while p < e:
            if g < 0:
                c = np.int64(cids[p])
            elif g_dir == 0:
                c = np.int64(ix[p])
            else:
                c = np.int64(iix[p])
            if c >= hi:
                rest_dead = True
                break
            p += 1
            if g_lab != -1:
                lab = el[p - 1] if g_dir == 0 else iel[p - 1]
                if lab != g_lab:
                    continue
            if check_cand:
                q = _gallop(cids, st[o_ccur + d], c_end, c)
                st[o_ccur + d] = q
                if q == c_end:        # no larger candidate is in the set
                    rest_dead = True
                    break
                if cids[q] != c:
                    continue
            ok = True
            dead = False
            for t in range(t0, t1):
                if t == g:
                    continue
                mj = st[m0 + prog[o_bn_pos + t]]
                want_e = prog[o_bn_elabel + t] if has_elab else -1
                if prog[o_bn_dir + t] == 0:
                    le = ip[mj + 1]
                    q = _gallop(ix, st[o_cur + t], le, c)
                    st[o_cur + t] = q
                    if q == le:
                        dead = True
                        break
                    if ix[q] != c or (want_e != -1 and el[q] != want_e):
                        ok = False
                        break
                else:
                    le = iip[mj + 1]
                    q = _gallop(iix, st[o_cur + t], le, c)
                    st[o_cur + t] = q
                    if q == le:
                        dead = True
                        break
                    if iix[q] != c or (want_e != -1 and iel[q] != want_e):
                        ok = False
                        break
            if dead:                  # a cursor ran off its list: no later candidate fits
                rest_dead = True
                break
            if not ok:
                continue
            # label and degree after the intersection: most candidates fail
            # the sequential cursor test, which avoids these random accesses
            if check_vlab and vl[c] != want_v:
                continue
            if ip[c + 1] - ip[c] < min_out or iip[c + 1] - iip[c] < min_in:
                continue
            for x in range(prog[o_inj_ptr + d], prog[o_inj_ptr + d + 1]):
                if st[m0 + prog[o_inj_pos + x]] == c:
                    ok = False
                    if use_fs:        # c is taken: this failure also depends on its holder
                        st[o_fs + d] |= prog[o_anc + d] | prog[o_anc + prog[o_inj_pos + x]]
                    break
            if not ok:
                continue
            for t in range(prog[o_na_ptr + d], prog[o_na_ptr + d + 1]):
                if _has_edge(ip, ix, iip, iix, st[m0 + prog[o_na_pos + t]], c,
                             prog[o_na_dir + t]):
                    ok = False
                    break
            if not ok:
                continue
            if cut != CUT_OFF and not _cut_ok(st, m0, d, c, part, prog, o_bn_ptr, o_bn_pos,
                                                o_bn_dir, cut, cdepth):
                continue
            found = c
            break
        # the positions scanned, plus one for the step itself (counted here rather
        # than in the loop, which is the innermost of the search)
        steps += p - p0 + 1
        if rest_dead:
            p = e
        st[o_pos + d] = p

        if found < 0:
            if count_only and d == prog[H_TWIN0]:
                # twins whose checks need the scan: its survivors are their set
                n_tw = _choices(st[st.shape[0] - 2], k - d, prog[H_TWIN_CHAIN] != 0)
                st[st.shape[0] - 2] = 0       # ST_TWINS
                total += n_tw
                if use_fs:
                    if n_tw > 0:
                        st[o_found] += 1
                    else:                     # a set too small: the twins' failing set
                        st[o_fs + d] |= prog[o_failx]
            if use_fs and d >= 2:
                f = _fs_of_depth(st, d, o_fs, o_snap, o_found, prog[o_anc + d])
                d -= 1
                _fs_child_done(st, d, f, o_fs, o_pos, o_end)
                continue
            d -= 1
            if d == 0:
                d = -1
            continue
        st[m0 + d] = found
        if count_only and d == prog[H_TWIN0]:
            st[st.shape[0] - 2] += 1          # ST_TWINS: a survivor, counted at the end
            continue
        if d == k - 1:
            if use_fs:
                st[o_found] += 1
            if count_only:
                total += 1
            else:
                for x in range(k):
                    out[nout, x] = st[m0 + x]
                nout += 1
                if nout >= cap:
                    break
            continue
        d += 1
        init = True               # the next iteration initialises depth d
    st[ST_D] = d
    st[ST_W] = w
    return total if count_only else nout


@njit(parallel=True, cache=True, nogil=True)
def run_lanes(item_root, item_a, item_b, item_hi, roots,
              ip, ix, iip, iix, el, iel, vl, cids, prog, part, cptr, cidx, ltab, st, out, res,
              cap, count_only, budget, flag):
    """One round of every lane, in parallel (``prange`` over lanes).

    Lane ``t`` resumes from its state row ``st[t]`` and takes items
    ``st[t, ST_W] + j * lanes``. ``res[t]`` receives its raw count
    (``count_only``) or the number of rows it wrote to ``out[t]`` (at most
    ``cap``); ``out`` is (lanes × rows × k). Each lane returns after about
    ``budget`` steps (``BIG``: when its items are done or ``out`` is full);
    ``flag`` (int64[1], zero on entry) ends the call for every lane once one
    has used its budget, or at once when it is ``STOP_NOW`` (see :func:`_run_lane`).
    """
    nlanes = st.shape[0]
    for lane in prange(nlanes):
        # work on a private copy of the state row: neighbouring rows share
        # cache lines, and the scan writes its state at every step
        local = st[lane].copy()
        res[lane] = _run_lane(nlanes, item_hi, item_root, item_a, item_b, roots,
                              ip, ix, iip, iix, el, iel, vl, cids, prog, part, cptr, cidx,
                              ltab, local, out[lane], cap, count_only, budget, flag)
        st[lane, :] = local
