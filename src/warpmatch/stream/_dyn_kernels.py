"""numba kernels of :mod:`warpmatch.stream.dynamic` (gapped sorted CSR with slack).

GCSM (Wei & Jiang, §V-A) keeps every neighbour list in an array preallocated
to twice its size, appends new neighbours, marks deleted ones with negative
values and re-sorts the updated lists after matching. We keep the same
storage idea (per-row slack, a full row moves to the end with doubled
capacity) but never let a row become unsorted: the matching engines read a
per-batch *overlay* of timestamped entries (built by :func:`build_overlay`)
instead of marked storage, and :func:`apply_rows` rewrites each touched row
as its state after the batch. Both are one linear merge of a row with its
sorted events (:func:`_merge_row`), which writes either every version of
each entry or only the final state, so both cost
``O(events + sum of touched degrees)``.

Events (one per valid update and per row it touches) arrive sorted by
``(row, nbr, update)``; ``ev_ptr[r]:ev_ptr[r+1]`` are the events of touched
row ``rows[r]``. Because a batch is validated sequentially, the events of one
``(row, nbr)`` pair alternate insert/delete starting with an insert when the
pair is absent from storage and with a delete when it is present.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..engine._cpu_kernels import _lower_bound   # the static CPU engine's binary search

NEVER = np.int32(2**31 - 1)
BEFORE = np.int32(-1)

#: validation codes (index into _checks.REASONS)
OK, SELF_LOOP, EXISTS, MISSING = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def _row_find(nbr, s, d, y):
    """Position of ``y`` in the sorted slice ``nbr[s:s+d]`` or -1 (binary search)."""
    lo = _lower_bound(nbr, s, s + d, y)
    if lo < s + d and nbr[lo] == y:
        return lo
    return -1


@njit(cache=True, nogil=True)
def row_find(start, deg, nbr, u, v):
    """Storage position of entry ``v`` in row ``u`` or -1 (``u`` beyond the arrays: -1)."""
    if u < 0 or u >= deg.shape[0]:
        return -1
    return _row_find(nbr, start[u], np.int64(deg[u]), v)


@njit(cache=True, nogil=True)
def validate_sequential(a, b, op, order, start, deg, nbr, code):
    """Validate updates in arrival order, grouped by edge.

    ``a[i] -> b[i]`` is update ``i``'s edge in storage-row form (undirected:
    ``a = min``, ``b = max``; the row of ``a`` holds ``b`` iff the edge exists).
    ``order`` sorts the updates by edge key, stably (so arrival order inside a
    group). Invalid updates leave the group's existence flag unchanged, which
    is exactly the state the following updates see under ``on_invalid="skip"``.
    Writes ``code[i]`` (OK / SELF_LOOP / EXISTS / MISSING).
    """
    m = order.shape[0]
    j = 0
    while j < m:
        i0 = order[j]
        u = a[i0]
        v = b[i0]
        if u == v:
            code[i0] = SELF_LOOP
            j += 1
            continue
        exists = row_find(start, deg, nbr, u, v) >= 0
        while j < m and a[order[j]] == u and b[order[j]] == v:
            i = order[j]
            if op[i] > 0:
                if exists:
                    code[i] = EXISTS
                else:
                    code[i] = OK
                    exists = True
            else:
                if exists:
                    code[i] = OK
                    exists = False
                else:
                    code[i] = MISSING
            j += 1


@njit(cache=True, nogil=True, inline="always")
def _merge_row(nbr, lab, s, d, ev_nbr, ev_upd, ev_op, ev_lab, e, e_end, has_elab, versions,
               out, o_nbr, o_elab, o_ins, o_dl):  # pragma: no cover - compiled
    """Merge the sorted row ``nbr[s:s+d]`` (labels ``lab``) with its events ``e:e_end``.

    Writes from position ``out`` of the ``o_*`` arrays on, in neighbour order,
    and returns the position past the last entry written. With ``versions``:
    every version of every entry, with ``o_ins``/``o_dl`` as
    :func:`build_overlay` describes; without: only the entries alive after
    the batch, with their last label (:func:`apply_rows`; ``ev_upd``,
    ``o_ins`` and ``o_dl`` are then not used). Inlined into the kernels: as a
    call per row it made :func:`build_overlay` 10-20% slower.
    """
    i = np.int64(0)
    while i < d or e < e_end:
        if e >= e_end or (i < d and nbr[s + i] < ev_nbr[e]):
            # a stored entry without events: kept as it is (the common case)
            o_nbr[out] = nbr[s + i]
            if versions:
                o_ins[out] = BEFORE
                o_dl[out] = NEVER
            if has_elab:
                o_elab[out] = lab[s + i]
            out += 1
            i += 1
            continue
        y = ev_nbr[e]
        live = False                    # is there a version of y alive now
        y_lab = np.int32(0)
        last = out
        if i < d and nbr[s + i] == y:
            live = True
            if has_elab:
                y_lab = lab[s + i]
            if versions:
                o_nbr[out] = y
                o_ins[out] = BEFORE
                o_dl[out] = NEVER
                if has_elab:
                    o_elab[out] = y_lab
                out += 1
            i += 1
        while e < e_end and ev_nbr[e] == y:
            if ev_op[e] > 0:
                live = True
                y_lab = ev_lab[e]
                if versions:
                    o_nbr[out] = y
                    o_ins[out] = ev_upd[e]
                    o_dl[out] = NEVER
                    if has_elab:
                        o_elab[out] = y_lab
                    last = out
                    out += 1
            else:
                # the batch was validated: a delete always has a live version
                live = False
                if versions:
                    o_dl[last] = ev_upd[e]
            e += 1
        if live and not versions:
            o_nbr[out] = y
            if has_elab:
                o_elab[out] = y_lab
            out += 1
    return out


@njit(cache=True, nogil=True, inline="always")
def _overlay_row(r, rows, ev_ptr, ev_nbr, ev_upd, ev_op, ev_lab, start, deg, nbr, elab,
                 has_elab, o_off, o_nbr, o_elab, o_ins, o_dl):
    x = rows[r]
    _merge_row(nbr, elab, start[x], np.int64(deg[x]), ev_nbr, ev_upd, ev_op, ev_lab,
               ev_ptr[r], ev_ptr[r + 1], has_elab, True, o_off[r], o_nbr, o_elab, o_ins, o_dl)


@njit(cache=True, parallel=True)
def build_overlay(rows, ev_ptr, ev_nbr, ev_upd, ev_op, ev_lab, start, deg, nbr, elab,
                  has_elab, o_off, o_nbr, o_elab, o_ins, o_dl):
    """Fill the overlay rows: every version of every entry, sorted by ``(nbr, ins)``.

    Storage entries get ``ins = BEFORE``; an insert by update ``i`` adds an
    entry with ``ins = i``; a delete by update ``i`` sets ``dl = i`` on the
    pair's entry that is alive at that moment (the last one written). Rows run
    in parallel; :func:`build_overlay_serial` is the same for small batches (a
    parallel region costs tens of µs, and stalls while a core is busy).
    """
    for r in prange(rows.shape[0]):
        _overlay_row(r, rows, ev_ptr, ev_nbr, ev_upd, ev_op, ev_lab, start, deg, nbr, elab,
                     has_elab, o_off, o_nbr, o_elab, o_ins, o_dl)


@njit(cache=True, nogil=True)
def build_overlay_serial(rows, ev_ptr, ev_nbr, ev_upd, ev_op, ev_lab, start, deg, nbr, elab,
                         has_elab, o_off, o_nbr, o_elab, o_ins, o_dl):
    """:func:`build_overlay` on one thread."""
    for r in range(rows.shape[0]):
        _overlay_row(r, rows, ev_ptr, ev_nbr, ev_upd, ev_op, ev_lab, start, deg, nbr, elab,
                     has_elab, o_off, o_nbr, o_elab, o_ins, o_dl)


@njit(cache=True, nogil=True, inline="always")
def _apply_chunk(ch, nchunks, rows, new_start, ev_ptr, ev_nbr, ev_op, ev_lab, start, deg,
                 nbr, elab, has_elab):
    """Rows ``ch, ch + nchunks, ...``: each merged into a scratch row, then copied to
    its (new) place, so rewriting in place is safe and no row allocates."""
    unused = np.empty(0, np.int32)      # ev_upd, o_ins, o_dl: not used without versions
    buf = np.empty(256, np.int32)
    lbuf = np.empty(256 if has_elab else 0, np.int32)
    for r in range(ch, rows.shape[0], nchunks):
        x = rows[r]
        d = np.int64(deg[x])
        need = d + ev_ptr[r + 1] - ev_ptr[r]
        if need > buf.shape[0]:
            buf = np.empty(2 * need, np.int32)
            if has_elab:
                lbuf = np.empty(2 * need, np.int32)
        w = _merge_row(nbr, elab, start[x], d, ev_nbr, unused, ev_op, ev_lab,
                       ev_ptr[r], ev_ptr[r + 1], has_elab, False, 0, buf, lbuf, unused, unused)
        t = new_start[r]
        for i in range(w):
            nbr[t + i] = buf[i]
        if has_elab:
            for i in range(w):
                elab[t + i] = lbuf[i]


@njit(cache=True, parallel=True)
def apply_rows(rows, new_start, ev_ptr, ev_nbr, ev_op, ev_lab, start, deg, nbr, elab,
               has_elab, nchunks):
    """Rewrite every touched row as its state after the batch, at ``new_start[r]``.

    ``new_start[r]`` is either the row's own start (it fits its capacity) or a
    fresh region past the used part of the arrays (relocation). Rows write
    disjoint regions, so chunks of rows run in parallel;
    :func:`apply_rows_serial` is the same on one thread.
    """
    for ch in prange(nchunks):
        _apply_chunk(ch, nchunks, rows, new_start, ev_ptr, ev_nbr, ev_op, ev_lab, start, deg,
                     nbr, elab, has_elab)


@njit(cache=True, nogil=True)
def apply_rows_serial(rows, new_start, ev_ptr, ev_nbr, ev_op, ev_lab, start, deg, nbr, elab,
                      has_elab):
    """:func:`apply_rows` on one thread."""
    _apply_chunk(0, 1, rows, new_start, ev_ptr, ev_nbr, ev_op, ev_lab, start, deg, nbr, elab,
                 has_elab)


@njit(cache=True, parallel=True)
def copy_rows(src_start, src_nbr, src_elab, deg, dst_start, dst_nbr, dst_elab, has_elab):
    """Copy every row ``v`` (``deg[v]`` entries) from ``src_start[v]`` to ``dst_start[v]``."""
    for v in prange(deg.shape[0]):
        d = np.int64(deg[v])
        s = src_start[v]
        t = dst_start[v]
        for j in range(d):
            dst_nbr[t + j] = src_nbr[s + j]
        if has_elab:
            for j in range(d):
                dst_elab[t + j] = src_elab[s + j]


@njit(cache=True, parallel=True)
def gather_rows(start, deg, nbr, elab, has_elab, offs, out_src, out_dst, out_lab):
    """Flatten the gapped rows into edge arrays; ``offs`` is the exclusive cumsum of ``deg``."""
    for v in prange(deg.shape[0]):
        d = np.int64(deg[v])
        s = start[v]
        t = offs[v]
        for j in range(d):
            out_src[t + j] = v
            out_dst[t + j] = nbr[s + j]
            if has_elab:
                out_lab[t + j] = elab[s + j]
