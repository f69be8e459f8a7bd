"""numba kernels of the sequential CPU path: one call applies and matches a run of updates.

Map: row edits in place (:func:`_find`, :func:`_relocated_cap`, :func:`_insert`,
:func:`_delete`) < one edge in every row it occupies (:func:`_edge_room`,
:func:`_edge_insert`, :func:`_edge_delete`) < the candidate filter's counts of one
edge (:func:`_nlf_edge`) < one update's delta searches (:func:`_searches`, the
batch engine's :func:`~warpmatch.stream._cpu_delta._task` per plan) <
:func:`seq_run` (updates ``i0..i1-1`` in arrival order) and :func:`seq_undo`
(take them back, for ``on_invalid="error"``). The Python side is
:mod:`warpmatch.stream.sequential`.

RapidFlow (Sun et al., VLDB 2022, Alg. 1) handles a stream one update at a
time: validate it against the graph, update the graph and its index, search
from the update edge. This is that loop, fused into one numba call per run of
updates, over the stores the batch path keeps (the gapped sorted CSR of
:mod:`warpmatch.stream.dynamic`, the relevant subgraph of
:mod:`warpmatch.stream.relevant` and the masks of
:mod:`warpmatch.stream.filter`):

- Each update is checked against the whole graph's row (self-loop, insert of an
  existing edge, delete of a missing one) and applied there in place (sorted
  insert or delete; a full row moves to the free tail of the array).
- An update whose endpoint labels make it irrelevant to the query (a label
  pair no query edge has, :func:`~warpmatch.stream.relevant.relevant_pairs`)
  stops there. In split mode such updates touch only the edge set, in a first
  pass of their own (:func:`_irrelevant_pass`: one hash probe each).
- A relevant update is applied to the relevant subgraph too, the filter's
  counts and masks of its two endpoints are updated (exact, not the batch
  path's union over a batch's states), and each plan whose first two query
  vertices the endpoints' masks allow is searched on the stores as they are:
  before the edit for a plan that needs the state before it (a deleted query
  edge, an inserted non-edge of an induced query), after it otherwise. Reading
  storage rows directly, the searches need no per-batch overlay.

Status codes tell the caller to make room (a row must move and the edge array
is full), that an update was invalid under ``on_invalid="error"`` (the caller
undoes the run), or that a count overflowed int64.

What differs from RapidFlow:

- No per-query-edge candidate relations are kept: the filter's masks are the
  index, and each task builds its local candidate space
  (:mod:`warpmatch.stream._cpu_local`) for larger labeled queries.
- One search per plan of the query's edge-pair orbits, weighted, and the last
  levels counted from set sizes (:mod:`warpmatch.stream._cpu_group`), not one
  enumeration per automorphism.
- Every update is validated (and the irrelevant ones are stored, in a hash
  set, in a first pass of their own); RapidFlow trusts the stream and keeps
  only the relevant edges.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..engine._borrow import borrow
from ..engine._raw import call_i64x4, prefetch
from ._cpu_delta import _task, add_weighted, plan_takes, task_scratch
from ._dyn_kernels import EXISTS, MISSING, OK, SELF_LOOP
from ._edgeset import (E_BITS, E_LIVE, MAX_LOAD, _home, edge_key, es_delete, es_insert,
                       es_put, es_remove, es_slot)
from ._store import MIN_ROW_CAP
from .filter import _mask_of

#: :func:`seq_run`'s status: every update done; a row must move and the edge array of
#: store ``ROOM_*`` lacks room (``ctl[C_ROOM]`` slots); an invalid update under
#: ``on_invalid="error"`` (``ctl[C_NEXT]`` is its index); an int64 overflow
DONE, ROOM_FULL_OUT, ROOM_FULL_IN, ROOM_REL_OUT, ROOM_REL_IN, INVALID, OVERFLOW, ROOM_SET, \
    PAUSED = range(9)
#: slots of the control array ``ctl`` (int64): the next update to process, room
#: needed, updates applied (valid), net edge change of the whole graph and of the
#: relevant subgraph, relevant updates, tasks searched, how far the irrelevant pass got,
#: the sums of ``plus`` and ``minus`` (int64, wrapping as numpy's sum does); the probe
#: (:func:`seq_run`'s ``PAUSED``): 1 + the update index at which the time is looked at
#: (0: none), the deadline there (the clock's ns), the address of ``clock_gettime`` (0:
#: none, pause there whatever the time) and its clock id, and two slots for its timespec
(C_NEXT, C_ROOM, C_VALID, C_NET, C_RNET, C_REL, C_TASKS, C_IRR, C_PLUS, C_MINUS, C_PROBE,
 C_BUDGET, C_CLOCK, C_CLOCK_ID, C_TS) = range(15)
CTL_SIZE = 17
#: ``code`` of an update no call has reached yet (the caller's initial value)
NOT_DONE = 127
#: slots of a store's ``meta`` array (int64): used slots, live (allocated) slots,
#: entries; mirrored into :class:`~warpmatch.stream.dynamic._Store` after a call
M_USED, M_LIVE, M_ENTRIES = range(3)
#: updates ahead whose edge-set slot is prefetched (split mode): a probe misses the cache
PREFETCH_AHEAD = 8


# ------------------------------------------------------------------ one row
@njit(cache=True, nogil=True, inline="always")
def _find(start, deg, nbr, x, y):
    """``(position, found)`` of ``y`` in the sorted row of ``x`` (insert position if absent).

    The binary search of ``engine._cpu_prog._lower_bound``, written inline: this
    runs up to three times per update on the path whose every nanosecond shows
    (validation, insert, delete), and a version calling ``_lower_bound`` measured
    slower (hprd and yeast streams, one thread, 2-core machine, best of 30-40 runs:
    whole-run kernel time 0.276 vs 0.255 ms, 0.506 vs 0.389, 0.540 vs 0.460; the runs
    vary by about 20%, so the sign is firmer than the size)."""
    lo = start[x]
    e = lo + deg[x]
    hi = e
    while lo < hi:
        mid = (lo + hi) >> 1
        if nbr[mid] < y:
            lo = mid + 1
        else:
            hi = mid
    return lo, lo < e and nbr[lo] == y


@njit(cache=True, nogil=True, inline="always")
def _relocated_cap(d, cap, slack):
    """Capacity a full row of degree ``d`` gets when it moves: the rule of
    ``DynamicGraph._apply_store`` (vectorised there) for one row gaining one entry."""
    want = np.int64(np.ceil((d + 1) * (1.0 + slack)))
    return max(max(2 * cap, want), MIN_ROW_CAP)


@njit(cache=True, nogil=True, inline="always")
def _room(x, deg, cap, slack):
    """Slots row ``x`` takes from the free tail to receive one more entry (0: it fits)."""
    if deg[x] < cap[x]:
        return np.int64(0)
    return _relocated_cap(np.int64(deg[x]), cap[x], slack)


@njit(cache=True, nogil=True, inline="always")
def _shift(arr, lo, hi, by):
    """``arr[lo + by : hi + by] = arr[lo:hi]`` for ``by`` of +1 or -1 (one overlapping move).

    A loop per array (not one loop over both) so that each compiles to a
    plain memory move: edits land on high-degree rows most of the time."""
    if by > 0:
        for z in range(hi - 1, lo - 1, -1):
            arr[z + 1] = arr[z]
    else:
        for z in range(lo, hi):
            arr[z - 1] = arr[z]


@njit(cache=True, nogil=True, inline="always")
def _insert(x, y, lab, start, deg, cap, nbr, elab, has_elab, meta, slack):
    """Insert ``y`` (label ``lab``) into the sorted row of ``x``; the caller made room."""
    d = np.int64(deg[x])
    s = start[x]
    q, _ = _find(start, deg, nbr, x, y)
    if d >= cap[x]:
        # move the row to the free tail with a larger capacity, inserting on the way
        nc = _relocated_cap(d, cap[x], slack)
        t = meta[M_USED]
        nbr[t:t + q - s] = nbr[s:q]
        nbr[t + q - s + 1:t + d + 1] = nbr[q:s + d]
        nbr[t + q - s] = y
        if has_elab:
            elab[t:t + q - s] = elab[s:q]
            elab[t + q - s + 1:t + d + 1] = elab[q:s + d]
            elab[t + q - s] = lab
        meta[M_USED] = t + nc
        meta[M_LIVE] += nc - cap[x]
        start[x] = t
        cap[x] = nc
    else:
        _shift(nbr, q, s + d, 1)
        nbr[q] = y
        if has_elab:
            _shift(elab, q, s + d, 1)
            elab[q] = lab
    deg[x] = d + 1
    meta[M_ENTRIES] += 1


@njit(cache=True, nogil=True, inline="always")
def _delete(x, y, start, deg, nbr, elab, has_elab, meta):
    """Remove ``y`` from the row of ``x``; returns its label (0 without labels), -1 if absent."""
    q, found = _find(start, deg, nbr, x, y)
    if not found:
        return np.int64(-1)
    lab = np.int64(elab[q]) if has_elab else np.int64(0)
    e = start[x] + deg[x]
    _shift(nbr, q + 1, e, -1)
    if has_elab:
        _shift(elab, q + 1, e, -1)
    deg[x] -= 1
    meta[M_ENTRIES] -= 1
    return lab


# ---------------------------------------------------------- one edge, both rows
@njit(cache=True, nogil=True, inline="always")
def _edge_room(a, b, o_deg, o_cap, o_nbr, o_meta, i_deg, i_cap, i_nbr, i_meta, directed,
               slack):
    """``(store, slots)`` of the first store whose tail cannot take the moved rows of an
    insertion ``a -> b`` (store 0 out, 1 in), or ``(-1, 0)``."""
    ra = _room(a, o_deg, o_cap, slack)
    rb = _room(b, i_deg, i_cap, slack)
    if directed:
        if o_meta[M_USED] + ra > o_nbr.shape[0]:
            return 0, ra
        if i_meta[M_USED] + rb > i_nbr.shape[0]:
            return 1, rb
    elif o_meta[M_USED] + ra + rb > o_nbr.shape[0]:
        return 0, ra + rb
    return -1, np.int64(0)


@njit(cache=True, nogil=True, inline="always")
def _edge_insert(a, b, lab, o_start, o_deg, o_cap, o_nbr, o_elab, o_meta, i_start, i_deg,
                 i_cap, i_nbr, i_elab, i_meta, has_elab, slack):
    """Insert edge ``a -> b``: ``b`` into ``a``'s out-row, ``a`` into ``b``'s in-row (the same
    store for an undirected graph, whose in-rows are its rows)."""
    _insert(a, b, lab, o_start, o_deg, o_cap, o_nbr, o_elab, has_elab, o_meta, slack)
    _insert(b, a, lab, i_start, i_deg, i_cap, i_nbr, i_elab, has_elab, i_meta, slack)


@njit(cache=True, nogil=True, inline="always")
def _edge_delete(a, b, o_start, o_deg, o_nbr, o_elab, o_meta, i_start, i_deg, i_nbr, i_elab,
                 i_meta, has_elab):
    """Delete edge ``a -> b`` from both rows; returns its stored label."""
    lab = _delete(a, b, o_start, o_deg, o_nbr, o_elab, has_elab, o_meta)
    _delete(b, a, i_start, i_deg, i_nbr, i_elab, has_elab, i_meta)
    return lab


# ---------------------------------------------------------------- the filter
@njit(cache=True, nogil=True, inline="always")
def _nlf_edge(a, b, sgn, directed, nq1, lab_idx, qlab, req, cnt, mask):
    """Count edge ``a -> b`` in (``sgn`` +1) or out of (-1) the filter's counts of both
    endpoints and recompute their masks (:mod:`warpmatch.stream.filter`)."""
    off_b = nq1 if directed else 0
    cnt[a, 0] += sgn
    lb = lab_idx[b]
    if lb >= 0:
        cnt[a, 1 + lb] += sgn
    cnt[b, off_b] += sgn
    la = lab_idx[a]
    if la >= 0:
        cnt[b, off_b + 1 + la] += sgn
    mask[a] = _mask_of(cnt, a, lab_idx[a], qlab, req)
    mask[b] = _mask_of(cnt, b, lab_idx[b], qlab, req)


# ----------------------------------------------------------- one update's searches
@njit(cache=True, nogil=True, inline="always")
def _searches(T, pg, i, kind, upd, mask, plan, plus, minus, scr, gbuf, mark, cnt, flag, ls,
              cbuf, aoff, aent, pbuf, ctl):
    """The tasks of update ``i`` whose plans have pair kind ``kind``, on the stores as they
    are now; adds count x weight to ``plus[i]`` or ``minus[i]``. Returns
    ``(overflow, gbuf, cbuf, aoff, aent, pbuf)``.

    ``upd`` is ``(u_a, u_b, u_op, u_lab)``, ``plan`` ``(order, pair_kind,
    pair_elabel, weight)`` and ``scr`` ``(M, pos, end, gen, gov, hiv, glen, err,
    rows)``. Inlined into :func:`seq_run`, as :func:`._cpu_delta._task` is into
    this: numba increments and decrements the reference count of every array
    argument at a call's entry and exit, one runtime call each even for a
    borrowed array (its assembly had 195 such call sites). With some thirty
    arrays the call cost about 270 ns, which inlining saved, more than a light
    update's whole search (hprd, 2-core CPU: 643 ->
    375 ns per update with no task, 1,061 -> 601 ns with one 2-vertex task).
    The tuples keep the call under CPython's 30 positional arguments, past
    which it is compiled as ``f(*args)``, which numba's inliner refuses.
    """
    u_a, u_b, u_op, u_lab = upd
    order, pair_kind, pair_elabel, weight, sp_addr, T_addr, tag_addr = plan
    M, pos, end, gen, gov, hiv, glen, err, rows = scr
    s = u_a[i]
    t = u_b[i]
    ms = mask[s]
    mt = mask[t]
    if ms == 0 or mt == 0:
        return False, gbuf, cbuf, aoff, aent, pbuf
    ins = u_op[i] > 0
    for j in range(order.shape[0]):
        if pair_kind[j] != kind or not plan_takes(j, ms, mt, order, pair_kind, pair_elabel,
                                                  ins, u_lab[i]):
            continue
        fn = sp_addr[j]
        if fn != 0:                 # the plan's compiled search (_seq_special)
            c = call_i64x4(fn, T_addr, s, t, tag_addr)
            if c < 0:               # its group's count overflowed int64
                return True, gbuf, cbuf, aoff, aent, pbuf
        else:
            c, gbuf, cbuf, aoff, aent, pbuf = _task(
                T, pg, i, j, False, 0, rows, M, pos, end, gen, gov, hiv, gbuf, glen, err,
                mark, cnt, flag, ls, cbuf, aoff, aent, pbuf, u_a, u_b, u_op)
        ctl[C_TASKS] += 1
        if err[0] != 0:
            return True, gbuf, cbuf, aoff, aent, pbuf
        if c != 0 and add_weighted(plus, minus, i, c, weight[j], ins == (kind == 1)):
            return True, gbuf, cbuf, aoff, aent, pbuf
    return False, gbuf, cbuf, aoff, aent, pbuf


# ------------------------------------------------------------------ the run
@njit(cache=True, nogil=True, inline="always")
def _trusted_run(i, hi, u_a, u_b, code, lab_idx, rel_table):
    """The first update at or after ``i`` (before ``hi``) that is a self-loop or
    relevant by ``rel_table``; the ones before it get ``code`` ``OK`` (trust mode: taken
    as valid and dropped)."""
    while i < hi:
        a = u_a[i]
        b = u_b[i]
        if a == b:
            break
        la = lab_idx[a]
        lb = lab_idx[b]
        if la >= 0 and lb >= 0 and rel_table[la, lb]:
            break
        code[i] = OK
        i += 1
    return i


@njit(cache=True, nogil=True, inline="always")
def _now_ns(ctl):
    """Monotonic nanoseconds by ``clock_gettime`` at address ``ctl[C_CLOCK]`` (nonzero),
    written into ``ctl[C_TS:C_TS + 2]``; by address, so the cached kernel needs no
    ctypes object (which would keep it out of numba's disk cache)."""
    call_i64x4(ctl[C_CLOCK], ctl[C_CLOCK_ID], ctl.ctypes.data + 8 * C_TS, 0, 0)
    return ctl[C_TS] * 1_000_000_000 + ctl[C_TS + 1]


@njit(cache=True, nogil=True)
def _irrelevant_pass(ctl, i1, error_mode, u_a, u_b, u_op, u_lab, code, old_lab, rel_table,
                     lab_idx, directed, es_keys, es_vals, es_meta, relq):
    """Split mode, first pass over ``ctl[C_NEXT] .. i1 - 1``: validate and apply every
    update of an edge the query cannot read (edge set only; ``ctl[C_IRR]`` on), and
    list the others, in order, in ``relq`` for the second pass.

    Two passes give the same result as one: an irrelevant update's validity and
    effect concern only its own edge, which no relevant update touches. Kept
    apart, the first pass is a tight loop (one hash probe per update, prefetched
    ahead; tens of ns) that the search's code does not slow down. Returns
    ``(status, stop, nrel)``: ``DONE`` (``stop == i1``), ``ROOM_SET`` (the edge
    set is full at ``stop``) or ``INVALID`` (under ``error_mode``, at ``stop``);
    ``relq[:nrel]`` are the relevant updates before ``stop``.
    """
    start = ctl[C_NEXT]
    done_to = max(ctl[C_IRR], start)        # irrelevant updates before it are applied
    bits = es_meta[E_BITS]
    slots = es_keys.shape[0]
    # the table's entries and the run's counters live in locals, written back once: kept
    # in memory, every update's stores to them serialise the loop (hprd's first 4,096
    # updates: 173 us against 115 us, a 2-core box)
    live = es_meta[E_LIVE]
    net = 0
    valid = 0
    nrel = 0
    status = DONE
    stop = i1
    for i in range(start, i1):
        ia = i + PREFETCH_AHEAD
        if ia < i1:
            prefetch(es_keys, _home(edge_key(np.int64(u_a[ia]), np.int64(u_b[ia]), directed),
                                    bits))
        a = np.int64(u_a[i])
        b = np.int64(u_b[i])
        la = lab_idx[a]
        lb = lab_idx[b]
        if la >= 0 and lb >= 0 and rel_table[la, lb]:
            relq[nrel] = i
            nrel += 1
            continue
        if i < done_to:
            continue
        ins = u_op[i] > 0
        key = edge_key(a, b, directed)
        slot, found = es_slot(es_keys, bits, key)
        if a == b:
            c = SELF_LOOP
        else:
            c = (EXISTS if found else OK) if ins else (OK if found else MISSING)
        if c != OK:
            code[i] = c
            if error_mode:
                status = INVALID
                stop = i
                break
            continue
        if ins:
            if live + 1 > MAX_LOAD * slots:         # es_full, on the local count
                status = ROOM_SET
                stop = i
                break
            es_put(es_keys, es_vals, slot, key, u_lab[i])
            live += 1
            net += 1
        else:
            old_lab[i] = es_remove(es_keys, es_vals, bits, slot)
            live -= 1
            net -= 1
        code[i] = OK
        valid += 1
    es_meta[E_LIVE] = live
    ctl[C_NET] += net
    ctl[C_VALID] += valid
    ctl[C_IRR] = stop
    return status, stop, nrel


@njit(cache=True, nogil=True)
def seq_run(ctl, i1, error_mode, u_a, u_b, u_op, u_lab, code, old_lab, plus, minus,
            f_os, f_od, f_oc, f_on, f_ol, f_om, f_is, f_id, f_ic, f_in, f_il, f_im,
            r_os, r_od, r_oc, r_on, r_ol, r_om, r_is, r_id, r_ic, r_in, r_il, r_im,
            same, rel_table, directed, has_elab, slack, split, trust, es_keys, es_vals,
            es_meta, nq1, lab_idx, qlab, req, fcnt, mask,
            T, pg, order, pair_kind, pair_elabel, weight, divisor, induced, mark, lcnt, flag,
            sp_addr, sp_tag, srch):
    """Validate, apply and match updates ``ctl[C_NEXT] .. i1 - 1`` in arrival order.

    ``u_*`` are the batch's updates (internal ids, all known vertices). ``f_*``
    are the whole graph's stores (out: start, deg, cap, nbr, elab, meta; then
    in: the same arrays again for an undirected graph), ``r_*`` the relevant
    subgraph's (the same as ``f_*`` when ``same``: the engine reads the whole
    graph). ``rel_table[lab_idx[a], lab_idx[b]]`` says whether an edge
    ``a -> b`` is relevant. The filter's ``fcnt``/``mask`` belong to the graph
    the searches read, whose address table is ``T`` (storage rows only).

    With ``trust`` (``keep="relevant"``, :mod:`warpmatch.stream.keep`; the stores are
    the relevant subgraph's, ``same``) an update no search can read, by
    ``rel_table``, is taken as valid without a look and changes nothing.

    With ``split`` (only with a relevant subgraph) the whole graph's stores are
    not read or written at all: a relevant edge lives in the relevant
    subgraph, every other edge in the edge set ``es_*``
    (:mod:`warpmatch.stream._edgeset`), and the two together are the graph;
    the caller rebuilds the whole graph's stores from them when it needs them.
    The edge set's updates go first (:func:`_irrelevant_pass`), the relevant
    ones after, each in arrival order; ``ctl[C_IRR]`` says how far the first
    pass got, and ``code`` keeps the caller's :data:`NOT_DONE` for updates
    neither pass reached.

    Writes ``code[i]`` (validation), ``old_lab[i]`` (a deletion's stored label,
    for :func:`seq_undo`), ``plus[i]``/``minus[i]``; advances ``ctl[C_NEXT]``
    past every update it finished. Returns a status (``DONE``, ``ROOM_*`` with
    the slots in ``ctl[C_ROOM]``, ``ROOM_SET``, ``INVALID`` with ``ctl[C_NEXT]``
    at the invalid update, ``OVERFLOW``, ``PAUSED``: the probe, below). Nothing of the
    update at ``ctl[C_NEXT]`` is applied when it returns, except on ``OVERFLOW`` found
    after its edit (then ``ctl[C_NEXT]`` is past it); on ``INVALID`` and
    ``OVERFLOW`` the caller takes back every update whose ``code`` is ``OK``
    with :func:`seq_undo`.

    ``sp_addr`` (int64 per plan) holds the address of each plan's compiled search
    (:mod:`warpmatch.stream._seq_special`, called with ``T``'s address and the
    update's endpoints), 0 where the packed program's interpreter searches it;
    ``sp_tag`` (two int64s: the address and row stride of their tag block) is
    the compiled searches' scratch, passed on as their fourth argument.

    The probe: with ``ctl[C_PROBE] = p + 1``, the run stops before update ``p``
    (``PAUSED``, ``ctl[C_NEXT]`` there; in split mode before the first relevant
    update at or past ``p``, the irrelevant ones being done) when the clock is past
    ``ctl[C_BUDGET]`` (ns) by then, and goes on otherwise:
    the caller learns whether a batch is heavy enough for the batch path's threads
    without the cost of a second call for every light one. With no clock
    (``ctl[C_CLOCK] == 0``) it always stops there.

    ``srch`` (bool per update, or empty for all) marks the updates whose deltas
    are searched; the others are validated and applied only (a replica's share,
    :meth:`~warpmatch.stream.matcher.ContinuousMatcher.apply_share`).
    """
    k = pg[0]
    # fixed-size scratch, owned here and passed on borrowed (engine/_borrow.py): the
    # owners are used again at the end, so they outlive every borrowed view; growable
    # scratch stays owned (a helper may replace it)
    (M_, pos_, end_, gen_, gov_, hiv_, glen_, err_, ls_,
     gbuf, cbuf, aoff, aent, pbuf) = task_scratch(k)
    rows_ = np.empty((1, k), dtype=np.int32)
    M, pos, end, gen, gov, hiv = (borrow(M_), borrow(pos_), borrow(end_), borrow(gen_),
                                  borrow(gov_), borrow(hiv_))
    glen, err, ls, rows = borrow(glen_), borrow(err_), borrow(ls_), borrow(rows_)
    # borrowed: the caller holds the arguments for the whole call
    T, pg, order, weight = borrow(T), borrow(pg), borrow(order), borrow(weight)
    pair_kind, pair_elabel = borrow(pair_kind), borrow(pair_elabel)
    mark, lcnt, flag = borrow(mark), borrow(lcnt), borrow(flag)
    u_a, u_b, u_op, u_lab = borrow(u_a), borrow(u_b), borrow(u_op), borrow(u_lab)
    code, old_lab, plus, minus = borrow(code), borrow(old_lab), borrow(plus), borrow(minus)
    lab_idx, fcnt, mask = borrow(lab_idx), borrow(fcnt), borrow(mask)
    f_os, f_od, f_oc, f_on, f_ol, f_om = (borrow(f_os), borrow(f_od), borrow(f_oc),
                                          borrow(f_on), borrow(f_ol), borrow(f_om))
    f_is, f_id, f_ic, f_in, f_il, f_im = (borrow(f_is), borrow(f_id), borrow(f_ic),
                                          borrow(f_in), borrow(f_il), borrow(f_im))
    r_os, r_od, r_oc, r_on, r_ol, r_om = (borrow(r_os), borrow(r_od), borrow(r_oc),
                                          borrow(r_on), borrow(r_ol), borrow(r_om))
    r_is, r_id, r_ic, r_in, r_il, r_im = (borrow(r_is), borrow(r_id), borrow(r_ic),
                                          borrow(r_in), borrow(r_il), borrow(r_im))
    rel_table, ctl = borrow(rel_table), borrow(ctl)
    es_keys, es_vals, es_meta = borrow(es_keys), borrow(es_vals), borrow(es_meta)
    upd = (u_a, u_b, u_op, u_lab)
    sp_addr, sp_tag = borrow(sp_addr), borrow(sp_tag)
    plan = (order, pair_kind, pair_elabel, weight, sp_addr, T.ctypes.data, sp_tag.ctypes.data)
    scr = (M, pos, end, gen, gov, hiv, glen, err, rows)
    limit = i1                          # the relevant updates run up to here
    stop_status = DONE
    nrel = 0
    probe = ctl[C_PROBE] - 1                # pause there if the run is late (PAUSED)
    relq = np.empty(0, np.int64)
    seg_hi = i1
    if split:
        relq = np.empty(max(np.int64(0), i1 - ctl[C_NEXT]), np.int64)
        if ctl[C_NEXT] <= probe < i1:
            # split mode looks at the time between two passes at the probe, so that a
            # pause leaves no irrelevant update past it applied (the rest may go to the
            # batch path)
            seg_hi = probe
    while True:                         # split mode with a probe: two segments
        if split:
            st, limit, nrel = _irrelevant_pass(ctl, seg_hi, error_mode, u_a, u_b, u_op,
                                               u_lab, code, old_lab, rel_table, lab_idx,
                                               directed, es_keys, es_vals, es_meta, relq)
            if st == ROOM_SET:
                return ROOM_SET
            stop_status = st
        t = 0
        i = ctl[C_NEXT] - 1
        while True:
            if split:                           # the relevant updates only
                if t >= nrel:
                    break
                i = relq[t]
                t += 1
            else:
                i += 1
                if i >= i1:
                    break
            if probe >= 0 and i >= probe and not split:
                probe = -1
                if ctl[C_CLOCK] == 0 or _now_ns(ctl) > ctl[C_BUDGET]:
                    ctl[C_NEXT] = i
                    return PAUSED
            a = np.int64(u_a[i])
            b = np.int64(u_b[i])
            ins = u_op[i] > 0
            la = lab_idx[a]
            lb = lab_idx[b]
            if trust and a != b and not (la >= 0 and lb >= 0 and rel_table[la, lb]):
                # taken as valid and dropped (keep="relevant"), with the run of such updates
                # after it, in a loop of its own: most of a labeled query's stream (hprd
                # rw-sparse-4: 5,228 of 5,250) goes here, and the main loop with its stores
                # to ``ctl`` per update took 0.16 ms for them, this loop 0.09-0.12 (2-core
                # box)
                j = _trusted_run(i + 1, i1 if probe < 0 or probe <= i else min(i1, probe),
                                 u_a, u_b, code, lab_idx, rel_table)
                code[i] = OK
                ctl[C_VALID] += j - i
                ctl[C_NEXT] = j
                i = j - 1
                continue
            rel = same or split or (la >= 0 and lb >= 0 and rel_table[la, lb])
            # ---- validation against the whole graph, in arrival order
            if a == b:
                code[i] = SELF_LOOP
            else:
                if not split:
                    _q, found = _find(f_os, f_od, f_on, a, b)
                else:                           # the relevant subgraph holds every such edge
                    _q, found = _find(r_os, r_od, r_on, a, b)
                code[i] = (EXISTS if found else OK) if ins else (OK if found else MISSING)
            if code[i] != OK:
                if error_mode:
                    ctl[C_NEXT] = i
                    return INVALID
                ctl[C_NEXT] = i + 1
                continue
            if ins:
                if not split:
                    st, need = _edge_room(a, b, f_od, f_oc, f_on, f_om, f_id, f_ic, f_in, f_im,
                                          directed, slack)
                    if st >= 0:
                        ctl[C_NEXT] = i
                        ctl[C_ROOM] = need
                        return ROOM_FULL_OUT + st
                if rel and not same:
                    st, need = _edge_room(a, b, r_od, r_oc, r_on, r_om, r_id, r_ic, r_in, r_im,
                                          directed, slack)
                    if st >= 0:
                        ctl[C_NEXT] = i
                        ctl[C_ROOM] = need
                        return ROOM_REL_OUT + st
            # ---- searches that read the state before the edit
            kind_before = 0 if ins else 1      # the plans that read the state before the edit
            want = srch.size == 0 or srch[i]
            if want and rel and (induced or not ins):
                bad, gbuf, cbuf, aoff, aent, pbuf = _searches(
                    T, pg, i, kind_before, upd, mask, plan, plus, minus, scr, gbuf, mark, lcnt,
                    flag, ls, cbuf, aoff, aent, pbuf, ctl)
                if bad:
                    ctl[C_NEXT] = i
                    return OVERFLOW
            # ---- the edit: whole graph, relevant subgraph, filter
            if ins:
                if not split:
                    _edge_insert(a, b, u_lab[i], f_os, f_od, f_oc, f_on, f_ol, f_om, f_is, f_id,
                                 f_ic, f_in, f_il, f_im, has_elab, slack)
                if rel and not same:
                    _edge_insert(a, b, u_lab[i], r_os, r_od, r_oc, r_on, r_ol, r_om, r_is, r_id,
                                 r_ic, r_in, r_il, r_im, has_elab, slack)
                ctl[C_NET] += 1
            else:
                if not split:
                    old_lab[i] = _edge_delete(a, b, f_os, f_od, f_on, f_ol, f_om, f_is, f_id, f_in,
                                              f_il, f_im, has_elab)
                if rel and not same:
                    lab_r = _edge_delete(a, b, r_os, r_od, r_on, r_ol, r_om, r_is, r_id, r_in,
                                         r_il, r_im, has_elab)
                    if split:
                        old_lab[i] = lab_r
                ctl[C_NET] -= 1
            ctl[C_VALID] += 1
            sgn = 1 if ins else -1
            if rel:
                _nlf_edge(a, b, sgn, directed, nq1, lab_idx, qlab, req, fcnt, mask)
                ctl[C_REL] += 1
                ctl[C_RNET] += sgn
                # ---- searches that read the state after the edit
                if want and (ins or induced):
                    bad, gbuf, cbuf, aoff, aent, pbuf = _searches(
                        T, pg, i, 1 - kind_before, upd, mask, plan, plus, minus, scr, gbuf,
                        mark, lcnt, flag, ls, cbuf, aoff, aent, pbuf, ctl)
                    if bad:
                        ctl[C_NEXT] = i + 1     # applied: the caller's undo takes it back
                        return OVERFLOW
                if divisor != 1:
                    plus[i] //= divisor
                    minus[i] //= divisor
                ctl[C_PLUS] += plus[i]
                ctl[C_MINUS] += minus[i]
            ctl[C_NEXT] = i + 1
        ctl[C_NEXT] = limit                 # (split: the irrelevant ones are done too)
        if split and seg_hi < i1 and limit == seg_hi and stop_status == DONE:
            probe = -1                      # at the probe, every update before it done
            if ctl[C_CLOCK] == 0 or _now_ns(ctl) > ctl[C_BUDGET]:
                return PAUSED
            seg_hi = i1
            continue
        break
    alive = (M_.size + pos_.size + end_.size + gen_.size + gov_.size + hiv_.size + glen_.size
             + err_.size + ls_.size + rows_.size)
    return stop_status + 0 * alive


@njit(cache=True, nogil=True)
def seq_undo(i1, u_a, u_b, u_op, u_lab, code, old_lab,
             f_os, f_od, f_oc, f_on, f_ol, f_om, f_is, f_id, f_ic, f_in, f_il, f_im,
             r_os, r_od, r_oc, r_on, r_ol, r_om, r_is, r_id, r_ic, r_in, r_il, r_im,
             same, rel_table, directed, has_elab, slack, split, trust, es_keys, es_vals,
             es_meta, nq1, lab_idx, qlab, req, fcnt, mask):
    """Take back the valid updates ``0 .. i1 - 1`` of :func:`seq_run`, last first.

    Each inverse edit meets the state right after its update, so a deletion's
    re-insertion always fits its row (the deletion freed the slot) and no row
    moves. Rows moved by the run keep their new place; the counts and masks
    return to what they were. With ``split``, the caller made room in the edge
    set for every deletion's re-insertion.
    """
    for i in range(i1 - 1, -1, -1):
        if code[i] != OK:
            continue
        a = np.int64(u_a[i])
        b = np.int64(u_b[i])
        la = lab_idx[a]
        lb = lab_idx[b]
        if trust and not (la >= 0 and lb >= 0 and rel_table[la, lb]):
            continue                        # dropped by the run: nothing to take back
        rel = same or (la >= 0 and lb >= 0 and rel_table[la, lb])
        if split and not rel:
            key = edge_key(a, b, directed)
            slot, found = es_slot(es_keys, es_meta[E_BITS], key)
            if u_op[i] > 0:
                es_delete(es_keys, es_vals, es_meta, slot)
            else:
                es_insert(es_keys, es_vals, es_meta, slot, key, old_lab[i])
            continue
        if u_op[i] > 0:
            if not split:
                _edge_delete(a, b, f_os, f_od, f_on, f_ol, f_om, f_is, f_id, f_in, f_il, f_im,
                             has_elab)
            if rel and not same:
                _edge_delete(a, b, r_os, r_od, r_on, r_ol, r_om, r_is, r_id, r_in, r_il, r_im,
                             has_elab)
        else:
            if not split:
                _edge_insert(a, b, old_lab[i], f_os, f_od, f_oc, f_on, f_ol, f_om, f_is, f_id,
                             f_ic, f_in, f_il, f_im, has_elab, slack)
            if rel and not same:
                _edge_insert(a, b, old_lab[i], r_os, r_od, r_oc, r_on, r_ol, r_om, r_is, r_id,
                             r_ic, r_in, r_il, r_im, has_elab, slack)
        sgn = -1 if u_op[i] > 0 else 1
        if rel:
            _nlf_edge(a, b, sgn, directed, nq1, lab_idx, qlab, req, fcnt, mask)
