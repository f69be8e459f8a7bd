"""Delta plans compiled to machine code, one function per plan, for the sequential CPU path.

Map: eligibility (:func:`plan_eligible`) < source of one plan's search
(:func:`plan_source`, via :class:`_Gen`) < a module of every eligible plan of a plan
set (:func:`module_source`; compiling and caching it is :mod:`._seq_compile`'s) < the row
helpers the generated code calls
(:func:`_row`, :func:`_has`, :func:`_mbit`; binary search and galloping are
:mod:`._cpu_rows`' ``_lower`` and ``gallop``, called through :func:`_low` and
:func:`_seek`).

The sequential path (:mod:`warpmatch.stream.sequential`) searches every update's
delta plans with the plan-interpreting kernel of :mod:`._cpu_delta`: every depth
reads its backward edges, restrictions and labels from the packed program, keeps
its scan state in arrays and calls helpers with twenty-odd arguments: about 1.1 µs a
search task on yeast's short labeled rows (a 2-core box), where RapidFlow (Sun et
al., VLDB 2022) handles that stream at about 140 ns an update in all. The GPU engine renders
each query into specialised CUDA source (:mod:`warpmatch.engine.gpu.render`); this
module does the same for the CPU: each eligible plan becomes a Python function of
nested loops with every constant in place (query vertices, backward edges and
their directions and labels, restrictions, which matched vertices a candidate can
equal), compiled by numba as a C function (``numba.cfunc``) whose address the
sequential kernel calls (:func:`warpmatch.engine._raw.call_i64x4`). Counts are
the interpreting kernel's raw counts, plan by plan (tests compare them).

A plan is eligible when its search reads no local candidate space (the engine
builds none for the plan's query, or the sequential path compiles it anyway: up to 8
vertices), is no path plan (:func:`._cpu_rows.path_plans`), its counting group is
made of sets of at most two vertices whose candidates may coincide (one counted by a
scan, two by ``|C1| |C2| - |C1 ∩ C2|``; the group's count is their product) with no
restriction between group vertices, and no core depth's two or more rows are all
fixed over its enclosing loop (:meth:`_Gen.pays`). Other plans keep the
interpreting kernel.

Compiling costs 0.3-1.2 s a plan of 4-5 vertices and about 3.5 s one of 8 (numba;
2-core box; up to 2.2 s a small plan on the H200 host); the module is written to a
cache directory (``$XDG_CACHE_HOME/warpmatch/cpu-plans``, default ``~/.cache/...``)
under the hash of its source and of the helpers' files, and numba caches the
compiled code beside it, so a query structure compiles once per machine and
version. When to compile is the engine's choice
(:class:`~warpmatch.stream.cpu.CpuDeltaEngine`'s ``specialise``); compiling is
:mod:`._seq_compile`'s.

How it differs from the interpreting kernel (same counts):

- Each depth's scan keeps its state in locals; a candidate is tested against the
  matched vertices it can equal only (not a backward neighbour, labels that can
  agree), and the restriction bounds clip the scan instead of being tested again.
- Rows fixed over a deeper loop are tagged once in a tag block of the caller's
  (:meth:`_Gen.tag_scan`), as the interpreter's ``_cpu_group._intersect`` tags its
  shallowest row; a tagged row generates the candidates only when far shorter.
- A depth counted from one generating row (the last level, a group set) is a loop
  without branches: each test a load and a compare, combined with ``&``
  (:meth:`_Gen.tight_count`); the interpreter branches per test, and a tag test
  that passes about half the time is mispredicted as often (email-Eu-core's
  square: 3x the interpreter, the diamond, tailed triangle and 4-clique 2.9-3.1x).
- A group set's counts are kept while the vertex they depend on stays and later
  core vertices among its candidates are taken off, as ``_cached`` does; a set of
  two is counted as one (its counts depend on the deeper of its two vertices).
- Storage rows only: the sequential path has no overlay (the batch path keeps the
  interpreting kernel).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..engine._raw import ld32, ld64
from ._cpu_rows import (BIG, T_BD, T_BL, T_BN, T_BS, T_ID, T_IL, T_IN, T_IS, T_MASK, T_NS,
                        _lower, gallop, path_plans)

__all__ = ["plan_eligible", "plan_source", "module_source"]

#: largest set of a counting group's vertices whose candidates may coincide that the
#: generated code counts (one: a scan; two: ``|C1| |C2| - |C1 ∩ C2|``); larger: not eligible
COMP_MAX_SPECIAL = 2
#: the largest int64 (a product of group counts past it is an overflow)
INT64_MAX = np.iinfo(np.int64).max
#: a tagged (fixed) row generates a depth's candidates instead of the shortest untagged
#: one when it is this many times shorter: generating from the untagged row costs a
#: tag load an entry, from the fixed one a gallop in the untagged row
TAG_DRIVE_RATIO = 8


# ------------------------------------------------------------- row helpers
@njit(cache=True, nogil=True)
def _row(start_p, deg_p, ns, x):
    """``(lo, hi)`` of storage row ``x`` (empty for a vertex without a storage row)."""
    if x >= ns:
        return np.int64(0), np.int64(0)
    lo = ld64(start_p, x)
    return lo, lo + ld32(deg_p, x)


@njit(cache=True, nogil=True)
def _has(start_p, deg_p, nbr_p, lab_p, ns, x, c, lab):
    """Does row ``x`` hold ``c`` (with edge label ``lab``; -1 any; no label array: 0)?"""
    lo, hi = _row(start_p, deg_p, ns, x)
    q = _lower(nbr_p, lo, hi, c)
    if q >= hi or ld32(nbr_p, q) != c:
        return False
    if lab == -1:
        return True
    el = ld32(lab_p, q) if lab_p != 0 else 0
    return el == lab


@njit(cache=True, nogil=True)
def _mbit(mask_p, c, u):
    """Does the filter's mask let data vertex ``c`` be query vertex ``u``?"""
    return (ld64(mask_p, c) >> u) & 1 != 0


@njit(cache=True, nogil=True)
def _low(nbr_p, lo, hi, x):
    """:func:`._cpu_rows._lower` as a call of its own (see :func:`_seek`)."""
    return _lower(nbr_p, lo, hi, x)


@njit(cache=True, nogil=True)
def _seek(nbr_p, lo, hi, x):
    """:func:`._cpu_rows.gallop` as a call of its own.

    The generated code calls these helpers as functions, not inlined by numba
    (``inline="always"``): numba then types and rewrites each once, not once per
    call site, which took a 14-plan module of yeast's 8-vertex query from 65 s to
    38 s to compile (a 2-core box), and LLVM inlines the calls all the same (the
    square, 4-clique and tailed triangle ran as fast)."""
    return gallop(nbr_p, lo, hi, x)


# ------------------------------------------------------------------ eligibility
def plan_eligible(plans: Any, j: int, local: bool, path: np.ndarray | None = None) -> bool:
    """Can plan ``j`` be compiled (module docstring)? ``local``: whether the engine
    builds local candidate spaces for these plans (then none is)."""
    if local or plans.purpose != "count":
        return False
    k = int(plans.k)
    gs = int(plans.group_start[j])
    if path is None:
        path = path_plans(plans)
    if path[j]:
        return False
    comps: dict[int, int] = {}
    for g in range(gs, k):
        c = int(plans.gcomp[j, g])
        comps[c] = comps.get(c, 0) + 1
        # the group is unbroken: no restriction may join two of its vertices
        lo, hi = int(plans.res_ptr[j, g]), int(plans.res_ptr[j, g + 1])
        if any(int(x) >= gs for x in plans.res_pos[lo:hi]):
            return False
    if any(n > COMP_MAX_SPECIAL for n in comps.values()):
        return False
    return _Gen(plans, j).pays()


# ------------------------------------------------------------------ code generation
class _Gen:
    """The source of one plan's search (:func:`plan_source`)."""

    def __init__(self, plans: Any, j: int) -> None:
        self.p = plans
        self.j = j
        self.k = int(plans.k)
        self.gs = int(plans.group_start[j])
        self.order = [int(x) for x in plans.order[j]]
        self.vl = [int(x) for x in plans.vlabel[j]]
        self.lines: list[str] = []
        self.pair: tuple | None = None      # the edges of the endpoints' buffer (source)
        #: depth -> its rows read from tags (:meth:`fixed_rows`), one tag-block row each
        self.tag_depths: dict[int, list[int]] = {}

    # -- the plan's per-depth facts
    def back(self, d: int) -> list[tuple[int, int, int]]:
        """``(position, direction, edge label)`` of depth ``d``'s backward edges."""
        p, j = self.p, self.j
        lo, hi = int(p.bn_ptr[j, d]), int(p.bn_ptr[j, d + 1])
        return [(int(p.bn_pos[t]), int(p.bn_dir[t]), int(p.bn_elabel[t])) for t in range(lo, hi)]

    def nonadj(self, d: int) -> list[tuple[int, int]]:
        """``(position, direction)`` of depth ``d``'s required non-edges (induced)."""
        p, j = self.p, self.j
        lo, hi = int(p.na_ptr[j, d]), int(p.na_ptr[j, d + 1])
        return [(int(p.na_pos[t]), int(p.na_dir[t])) for t in range(lo, hi)]

    def res(self, d: int) -> tuple[list[int], list[int]]:
        """Positions whose match ``c`` must exceed, and those it must stay below."""
        p, j = self.p, self.j
        lo, hi = int(p.res_ptr[j, d]), int(p.res_ptr[j, d + 1])
        above = [int(p.res_pos[t]) for t in range(lo, hi) if int(p.res_sign[t]) > 0]
        below = [int(p.res_pos[t]) for t in range(lo, hi) if int(p.res_sign[t]) <= 0]
        return above, below

    def may_equal(self, d: int, upto: int) -> list[int]:
        """The positions ``< upto`` whose match a candidate of depth ``d`` can equal: not
        a backward neighbour (no self-loops: a neighbour differs) and labels that
        can agree."""
        back = {b for b, _, _ in self.back(d)}
        out = []
        for x in range(upto):
            if x in back:
                continue
            if self.vl[d] != -1 and self.vl[x] != -1 and self.vl[d] != self.vl[x]:
                continue
            out.append(x)
        return out

    # -- emitting
    def emit(self, ind: int, text: str) -> None:
        self.lines.append("    " * ind + text)

    @staticmethod
    def names(dr: int) -> tuple[str, str, str, str]:
        """The generated code's names of direction ``dr``'s storage arrays: row starts,
        degrees, neighbours, edge labels."""
        return ("os_", "od_", "on_", "ol_") if dr == 0 else ("is_", "id_", "in_", "il_")

    def edge_test(self, x: int, dr: int, lab: int, want: bool) -> str:
        """A test that the edge between ``m{x}`` and ``c`` is present (``want``) or absent."""
        call = f"_has({', '.join(self.names(dr))}, ns, m{x}, c, {lab})"
        return call if want else f"not {call}"

    def probe(self, ind: int, q: str, hi: str, nb: str, lb: str, lab: int,
              miss: str) -> None:
        """Move cursor ``q`` of a sorted row (neighbours ``nb``, labels ``lb``, end ``hi``)
        to ``c``: the scan ends when the row does (no later ``c`` can be in it); ``miss``
        runs where the row lacks ``c`` with edge label ``lab`` (-1 any)."""
        e = self.emit
        e(ind, f"{q} = _seek({nb}, {q}, {hi}, c)")
        e(ind, f"if {q} >= {hi}:")
        e(ind + 1, "break")
        cond = f"ld32({nb}, {q}) != c"
        if lab != -1:
            cond += f" or (ld32({lb}, {q}) if {lb} != 0 else 0) != {lab}"
        e(ind, f"if {cond}:")
        e(ind + 1, miss)

    def checks(self, d: int, ind: int, back: bool, skip: str, upto: int | None = None
               ) -> None:
        """The tests of candidate ``c`` at depth ``d`` (``skip`` on failure): its mask
        bit, the matched vertices (positions below ``upto``, default all before the
        depth) it can equal, with ``back`` its backward edges (a scan of the depth's
        rows holds ``c`` in each already), the required non-edges."""
        self.emit(ind, f"if not _mbit(mk_, c, {self.order[d]}):")
        self.emit(ind + 1, skip)
        eq = self.may_equal(d, min(d, self.gs) if upto is None else upto)
        if eq:
            self.emit(ind, "if " + " or ".join(f"c == m{x}" for x in eq) + ":")
            self.emit(ind + 1, skip)
        for b, dr, lab in self.back(d) if back else ():
            self.emit(ind, f"if {self.edge_test(b, dr, lab, False)}:")
            self.emit(ind + 1, skip)
        for x, dr in self.nonadj(d):
            self.emit(ind, f"if {self.edge_test(x, dr, -1, True)}:")
            self.emit(ind + 1, skip)

    def choose_pair(self) -> tuple | None:
        """The edges to positions 0 and 1 whose rows' intersection is worth a buffer:
        where two or more depths, or a depth inside a loop, would intersect them."""
        users = []
        for d in range(2, self.k):
            got = {b: (dr, lab) for b, dr, lab in self.back(d) if b in (0, 1)}
            if 0 in got and 1 in got:
                users.append((d, (got[0], got[1])))
        if users and (len(users) > 1 or users[0][0] > 2):
            return users[0][1]
        return None

    def pays(self) -> bool:
        """Whether compiling this plan beats the interpreting kernel, by its shape: not
        where a core depth's two or more rows are all fixed over its enclosing loop
        (the interpreter tags one of them; this code would merge them again per
        iteration). Rows fixed beside a row that moves are tagged
        (:meth:`tag_scan`), as the interpreter's are, and a group's counts are kept
        while the vertices they depend on stay (:meth:`group_count`), as the
        interpreter's ``_cached`` does."""
        self.pair = self.choose_pair()
        for d in range(3, self.gs):
            specs = self.row_specs(d)
            lp = self.loop_of(d)
            if len(specs) >= 2 and lp >= 2 and all(x < lp for x, _, _ in specs):
                return False
        return True

    # -- the counting group
    def dep(self, d: int) -> int:
        """The deepest position depth ``d``'s candidates depend on (rows, restriction
        bounds; at least 1)."""
        above, below = self.res(d)
        return max([1, *(b for b, _, _ in self.back(d)), *above, *below])

    def comps(self) -> list[list[int]]:
        """The group's depths, by the sets whose candidates may coincide (``gcomp``)."""
        out: dict[int, list[int]] = {}
        for g in range(self.gs, self.k):
            out.setdefault(int(self.p.gcomp[self.j, g]), []).append(g)
        return list(out.values())

    def comp_dep(self, comp: list[int]) -> int:
        """The deepest position a group set's counts depend on."""
        return max(self.dep(g) for g in comp)

    def loop_of(self, d: int) -> int:
        """The depth of the loop a scan of depth ``d`` runs once per iteration of (a
        group depth's: the deepest position its set's counts depend on, since they
        are kept while that stays); 1 or less: once per task."""
        if d < self.gs:
            return d - 1
        for comp in self.comps():
            if d in comp:
                return self.comp_dep(comp)
        raise AssertionError(d)

    def member_test(self, x: int, g: int) -> str:
        """An expression: is ``m{x}`` (a core vertex matched after group depth ``g``'s
        counts were taken) one of ``g``'s candidates? False where it cannot be (a
        query neighbour of ``g``, another label)."""
        if x not in self.may_equal(g, self.gs):
            return "False"
        terms = [f"_mbit(mk_, m{x}, {self.order[g]})"]
        above, below = self.res(g)
        terms += [f"m{x} > m{y}" for y in above] + [f"m{x} < m{y}" for y in below]
        for b, dr, lab in self.back(g):
            terms.append(f"_has({', '.join(self.names(dr))}, ns, m{b}, m{x}, {lab})")
        return " and ".join(terms)

    def row_specs(self, d: int) -> list[tuple[int, int, int]]:
        """``(position, direction, edge label)`` of the rows depth ``d`` intersects: its
        backward rows, those of positions 0 and 1 replaced by the endpoints' buffer
        (position 1, direction -1, label -1: the buffer holds tested entries) where
        :meth:`uses_pair`."""
        pair = self.uses_pair(d)
        out = [(1, -1, -1)] if pair else []
        out += [(b, dr, lab) for b, dr, lab in self.back(d) if not (pair and b in (0, 1))]
        return out

    def fixed_rows(self, d: int) -> list[int]:
        """Indices (into :meth:`row_specs`) of the rows depth ``d`` reads from tags: those
        of vertices matched before its enclosing loop, when a row of that loop's
        vertex is left to drive the scan; else none."""
        lp = self.loop_of(d)
        specs = self.row_specs(d)
        if lp < 2:
            return []
        fixed = [i for i, (x, _, _) in enumerate(specs) if x < lp]
        return fixed if len(fixed) < len(specs) else []

    def uses_pair(self, d: int) -> bool:
        """Does depth ``d`` scan the update endpoints' common neighbours (the buffer
        ``pb``, :meth:`source`)? Where its backward edges to positions 0 and 1 are
        the ones the buffer was made for."""
        if self.pair is None:
            return False
        got = {b: (dr, lab) for b, dr, lab in self.back(d) if b in (0, 1)}
        return got.get(0) == self.pair[0] and got.get(1) == self.pair[1]

    def row_names(self, d: int, i: int, spec: tuple[int, int, int], ind: int) -> tuple:
        """Emit the bounds of row ``i`` of depth ``d`` (``spec`` from :meth:`row_specs`);
        ``(lo, hi, neighbour array, label array, edge label)`` names."""
        x, dr, lab = spec
        if dr == -1:                        # the endpoints' buffer
            return ("np.int64(0)", "npb", "pb_", "np.int64(0)", -1)
        st, dg, nb, lb = self.names(dr)
        self.emit(ind, f"a{i}_{d}, e{i}_{d} = _row({st}, {dg}, ns, m{x})")
        return (f"a{i}_{d}", f"e{i}_{d}", nb, lb, lab)

    def tag_scan(self, d: int, ind: int, fixed: list[int]) -> None:
        """Tag the intersection of depth ``d``'s fixed rows (:meth:`fixed_rows`) in its
        row of the tag block, again only when one of their vertices changed.

        The block (``_x``: its address and row stride) gives each tagged depth a
        row of one int32 tag per vertex, its last slot the row's tag counter: the
        first fixed row's entries get a fresh tag ``t``, each further row moves
        the entries tagged so far to ``t + 1`` (and so on), so a candidate is in
        every fixed row iff its tag is the last one; older tags never match. A
        candidate then costs one load, not a merge with rows that did not move
        (the interpreter's ``_cpu_group._intersect`` does the same)."""
        e = self.emit
        specs = self.row_specs(d)
        keys = sorted({specs[i][0] for i in fixed})
        e(ind, "if " + " or ".join(f"tv{d}_{x} != m{x}" for x in keys) + ":")
        b = ind + 1
        for x in keys:
            e(b, f"tv{d}_{x} = m{x}")
        t, rb = f"tg{d}", f"rb{d}"
        e(b, f"{t} = ld32(tb_, {rb} + ts_ - 1) + 1")
        e(b, f"if {t} > {2147483000 - len(fixed)}:")     # int32 tags: start the row again
        e(b + 1, "for y in range(ts_ - 1):")
        e(b + 2, f"st32(tb_, {rb} + y, 0)")
        e(b + 1, f"{t} = np.int64(1)")
        for n, i in enumerate(fixed):
            lo, hi, nb, lb, lab = self.row_names(d, i, specs[i], b)
            e(b, f"for z in range({lo}, {hi}):")
            e(b + 1, f"y = ld32({nb}, z)")
            if lab != -1:
                e(b + 1, f"if (ld32({lb}, z) if {lb} != 0 else 0) != {lab}:")
                e(b + 2, "continue")
            if n == 0:
                e(b + 1, f"st32(tb_, {rb} + y, {t})")
            else:
                e(b + 1, f"if ld32(tb_, {rb} + y) == {t}:")
                e(b + 2, f"st32(tb_, {rb} + y, {t} + 1)")
                e(b, f"{t} += 1")
        e(b, f"st32(tb_, {rb} + ts_ - 1, {t})")

    def scan(self, d: int, ind: int, count: str | None = None, upto: int | None = None
             ) -> int:
        """Open the scan of depth ``d``'s candidates ``c``; returns the indentation of the
        loop body, where ``c`` passed every test of the depth.

        The depth's rows are :meth:`row_specs`. The shortest untagged row generates
        (clipped by the restriction bounds); the rows fixed over the enclosing loop,
        where a row moves with it, are tested by one tag load (:meth:`tag_scan`),
        and the shortest of them generates instead where it is
        :data:`TAG_DRIVE_RATIO` times shorter; the other rows are merged with the
        generating row through cursors that only move forward (galloping), since
        the candidates ascend; a cursor at its row's end ends the scan.

        With ``count`` (a variable name), the candidates are only counted into it
        and nothing is emitted in the body: where one untagged row is left and it
        generates, by a loop without branches (:meth:`tight_count`). ``upto``: as
        :meth:`checks` says."""
        e = self.emit
        specs = self.row_specs(d)
        fixed = self.tag_depths.get(d, [])
        if fixed:
            self.tag_scan(d, ind, fixed)
        rows = [self.row_names(d, i, sp, ind) for i, sp in enumerate(specs)]
        merged = [i for i in range(len(rows)) if i not in fixed]
        above, below = self.res(d)
        lo_v, hi_v = f"lo{d}", f"hi{d}"
        e(ind, f"{lo_v} = np.int64(-1)")
        for x in above:
            e(ind, f"if m{x} > {lo_v}:")
            e(ind + 1, f"{lo_v} = m{x}")
        e(ind, f"{hi_v} = BIG")
        for x in below:
            e(ind, f"if m{x} < {hi_v}:")
            e(ind + 1, f"{hi_v} = m{x}")
        g = f"g{d}"

        def take(i: int, at: int) -> None:
            lo, hi, nb, lb, lab = rows[i]
            e(at, f"{g} = {i}")
            e(at, f"zl{d}, zh{d}, gn{d}, gl{d}, ge{d} = {lo}, {hi}, {nb}, {lb}, {lab}")

        take(merged[0], ind)
        for i in merged[1:]:
            lo, hi = rows[i][0], rows[i][1]
            e(ind, f"if {hi} - {lo} < zh{d} - zl{d}:")
            take(i, ind + 1)
        for i in fixed:             # a much shorter fixed row generates instead
            lo, hi = rows[i][0], rows[i][1]
            e(ind, f"if ({hi} - {lo}) * {TAG_DRIVE_RATIO} < zh{d} - zl{d}:")
            take(i, ind + 1)
        e(ind, f"if {lo_v} >= 0:")
        e(ind + 1, f"zl{d} = _lower(gn{d}, zl{d}, zh{d}, {lo_v} + 1)")
        probes = len(merged) > 1 or bool(fixed)     # a row other than the generating one
        if probes:
            for i in merged:
                e(ind, f"q{i}_{d} = {rows[i][0]}")
        tight = count is not None and len(merged) == 1 and not self.nonadj(d)
        if tight:
            e(ind, f"if {g} == {merged[0]}:")
            self.tight_count(d, ind + 1, rows[merged[0]], bool(fixed), bool(below), count,
                             upto)
            e(ind, "else:")
            ind += 1
        e(ind, f"for z{d} in range(zl{d}, zh{d}):")
        body = ind + 1
        e(body, f"c = ld32(gn{d}, z{d})")
        e(body, f"if c >= {hi_v}:")
        e(body + 1, "break")
        if any(r[4] != -1 for r in rows):
            e(body, f"if ge{d} != -1 and (ld32(gl{d}, z{d}) if gl{d} != 0 else 0) != ge{d}:")
            e(body + 1, "continue")
        if fixed:
            e(body, f"if ld32(tb_, rb{d} + c) != tg{d}:")
            e(body + 1, "continue")
        if probes:
            # the other untagged rows, merged: ``c`` must be in each
            e(body, "hit = True")
            for i in merged:
                _lo, hi, nb, lb, lab = rows[i]
                e(body, f"if {g} != {i}:")
                self.probe(body + 1, f"q{i}_{d}", hi, nb, lb, lab, "hit = False")
            e(body, "if not hit:")
            e(body + 1, "continue")
        self.checks(d, body, False, "continue", upto)
        if count is not None:
            e(body, f"{count} += 1")
        return body

    def tight_count(self, d: int, ind: int, row: tuple, tagged: bool, bounded: bool,
                    count: str, upto: int | None = None) -> None:
        """Count depth ``d``'s candidates from its one generating row (``row``, from
        :meth:`row_names`) into ``count``: every test a load and a compare, combined
        with ``&`` and added, so that the loop has no data-dependent branch. Where
        about half the entries pass (a tag test), each branch would be mispredicted
        half the time: email-Eu-core's square spent most of its time there."""
        e = self.emit
        _lo, _hi, _nb, _lb, lab = row
        terms = []
        if tagged:
            terms.append(f"(ld32(tb_, rb{d} + c) == tg{d})")
        if lab != -1:
            terms.append(f"((ld32(gl{d}, z{d}) if gl{d} != 0 else 0) == {lab})")
        terms.append(f"_mbit(mk_, c, {self.order[d]})")
        eq = self.may_equal(d, min(d, self.gs) if upto is None else upto)
        terms += [f"(c != m{x})" for x in eq]
        e(ind, f"for z{d} in range(zl{d}, zh{d}):")
        e(ind + 1, f"c = ld32(gn{d}, z{d})")
        if bounded:
            e(ind + 1, f"if c >= hi{d}:")
            e(ind + 2, "break")
        e(ind + 1, f"{count} += np.int64({' & '.join(terms)})")

    def member(self, d: int, ind: int, skip: str, upto: int | None = None) -> None:
        """Is ``c`` (a candidate of the other group depth) also a candidate of ``d``?"""
        above, below = self.res(d)
        for x in above:
            self.emit(ind, f"if c <= m{x}:")
            self.emit(ind + 1, skip)
        for x in below:
            self.emit(ind, f"if c >= m{x}:")
            self.emit(ind + 1, skip)
        self.checks(d, ind, True, skip, upto)

    def pair_buffer(self, ind: int) -> None:
        """Fill ``pb`` with the update endpoints' common neighbours along the edges
        :attr:`pair` names (a merge of the two rows, labels tested), ``npb`` of them."""
        e = self.emit
        (d0, l0), (d1, l1) = self.pair
        arrs = [self.names(dr) for dr in (d0, d1)]
        for i, (x, (st, dg, _n, _l)) in enumerate(zip(("m0", "m1"), arrs)):
            e(ind, f"pa{i}, pe{i} = _row({st}, {dg}, ns, {x})")
        e(ind, "pb = np.empty(max(np.int64(1), min(pe0 - pa0, pe1 - pa1)), np.int32)")
        e(ind, "pb_ = np.int64(pb.ctypes.data)")
        e(ind, "npb = np.int64(0)")
        # scan the shorter row, seek in the longer one
        n0, lb0 = arrs[0][2], arrs[0][3]
        n1, lb1 = arrs[1][2], arrs[1][3]
        e(ind, "if pe0 - pa0 <= pe1 - pa1:")
        self._pair_merge(ind + 1, ("pa0", "pe0", n0, lb0, l0), ("pa1", "pe1", n1, lb1, l1))
        e(ind, "else:")
        self._pair_merge(ind + 1, ("pa1", "pe1", n1, lb1, l1), ("pa0", "pe0", n0, lb0, l0))

    def _pair_merge(self, ind: int, short: tuple, long: tuple) -> None:
        e = self.emit
        sa, se, sn, sl, slab = short
        la, le, ln, ll, llab = long
        e(ind, f"q = {la}")
        e(ind, f"for z in range({sa}, {se}):")
        e(ind + 1, f"c = ld32({sn}, z)")
        if slab != -1:
            e(ind + 1, f"if (ld32({sl}, z) if {sl} != 0 else 0) != {slab}:")
            e(ind + 2, "continue")
        self.probe(ind + 1, "q", le, ln, ll, llab, "continue")
        e(ind + 1, "pb[npb] = c")
        e(ind + 1, "npb += 1")

    def group_count(self, comps: list[list[int]], deps: list[int], ind: int) -> None:
        """Add the counting group's count for the partial match ``m0 .. m{gs-1}`` to ``n``:
        the product of its sets' counts (a set of one vertex: its candidates; of
        two: ``|C1| |C2| - |C1 ∩ C2|``), -1 returned on an int64 overflow.

        A set whose candidates depend only on positions up to ``dep < gs - 1`` is
        counted when first needed after ``m{dep}`` changed (``h{set}`` says whether
        its counts are current), injective against ``m0 .. m{dep}`` only; each
        later core vertex that is one of its candidates is then taken off
        (:meth:`member_test`), as the interpreter's ``_cached`` does. A set is
        counted only while the product so far is not zero."""
        e = self.emit
        gs = self.gs
        e(ind, "t = np.int64(1)")
        for ci, comp in enumerate(comps):
            kept = deps[ci] < gs - 1
            upto = deps[ci] + 1 if kept else gs
            at = ind
            if kept:
                e(ind, f"if not h{ci}:")
                at = ind + 1
                e(at, f"h{ci} = True")
            if len(comp) == 1:
                g = comp[0]
                e(at, f"k{g} = np.int64(0)")
                self.scan(g, at, count=f"k{g}", upto=upto)
            else:
                g1, g2 = comp
                e(at, f"k{g1} = np.int64(0)")
                e(at, f"k{g2} = np.int64(0)")
                e(at, f"x{ci} = np.int64(0)")
                body = self.scan(g1, at, upto=upto)      # (no tight loop: more tests)
                e(body, f"k{g1} += 1")
                self.member(g2, body, "continue", upto)
                e(body, f"x{ci} += 1")
                e(at, f"if k{g1} != 0:")
                self.scan(g2, at + 1, count=f"k{g2}", upto=upto)
            # the later core vertices among the candidates come off
            for g in comp:
                e(ind, f"v{g} = k{g}")
            if len(comp) == 2:
                e(ind, f"w{ci} = x{ci}")
            for x in range(upto, gs):
                tests = [self.member_test(x, g) for g in comp]
                if all(t == "False" for t in tests):
                    continue
                for g, t in zip(comp, tests):
                    e(ind, f"i{g} = {t}")
                    e(ind, f"if i{g}:")
                    e(ind + 1, f"v{g} -= 1")
                if len(comp) == 2:
                    e(ind, f"if i{comp[0]} and i{comp[1]}:")
                    e(ind + 1, f"w{ci} -= 1")
            val = (f"v{comp[0]}" if len(comp) == 1
                   else f"v{comp[0]} * v{comp[1]} - w{ci}")
            e(ind, f"cv = {val}")
            e(ind, "if cv != 0:")
            ind += 1
            if ci > 0:
                e(ind, "if t > INT64_MAX // cv:")
                e(ind + 1, "return np.int64(-1)")
            e(ind, "t *= cv")
        e(ind, "if n > INT64_MAX - t:")
        e(ind + 1, "return np.int64(-1)")
        e(ind, "n += t")

    def source(self, name: str) -> str:
        """The whole function ``name(T, s0, s1) -> raw count``."""
        k, gs, j, p = self.k, self.gs, self.j, self.p
        e = self.emit
        e(0, f"def {name}(T, s0, s1, _x):")
        e(1, f"os_, od_, on_, ol_ = ld64(T, {T_BS}), ld64(T, {T_BD}), ld64(T, {T_BN}), "
             f"ld64(T, {T_BL})")
        e(1, f"is_, id_, in_, il_ = ld64(T, {T_IS}), ld64(T, {T_ID}), ld64(T, {T_IN}), "
             f"ld64(T, {T_IL})")
        e(1, f"mk_, ns = ld64(T, {T_MASK}), ld64(T, {T_NS})")
        # depth 0 and 1: what _task checks before its search
        e(1, "if s0 == s1:")
        e(2, "return 0")
        e(1, f"if not _mbit(mk_, s0, {self.order[0]}):")
        e(2, "return 0")
        pel = int(p.pair_elabel[j])
        if int(p.pair_kind[j]) == 1 and pel != -1:
            e(1, f"if not _has(os_, od_, on_, ol_, ns, s0, s1, {pel}):")
            e(2, "return 0")
        e(1, "m0 = s0")
        e(1, "c = s1")
        e(1, f"if not _mbit(mk_, c, {self.order[1]}):")
        e(2, "return 0")
        above, below = self.res(1)
        for x in above:
            e(1, f"if c <= m{x}:")
            e(2, "return 0")
        for x in below:
            e(1, f"if c >= m{x}:")
            e(2, "return 0")
        for b, dr, lab in self.back(1):
            e(1, f"if {self.edge_test(b, dr, lab, False)}:")
            e(2, "return 0")
        for x, dr in self.nonadj(1):
            e(1, f"if {self.edge_test(x, dr, -1, True)}:")
            e(2, "return 0")
        e(1, "m1 = s1")
        e(1, "n = np.int64(0)")
        if k == 2:
            e(1, "return np.int64(1)")
            return "\n".join(self.lines)
        # the endpoints' common neighbours, once per task, where two or more depths
        # (or a depth inside a loop) would intersect their rows again
        self.pair = self.choose_pair()
        if self.pair is not None:
            self.pair_buffer(1)
        self.tag_depths = {d: f for d in range(2, k) if (f := self.fixed_rows(d))}
        if self.tag_depths:                 # the tag block: address, row stride
            e(1, "tb_, ts_ = ld64(_x, 0), ld64(_x, 1)")
            for r, d in enumerate(sorted(self.tag_depths)):
                e(1, f"rb{d} = {r} * ts_")
                e(1, f"tg{d} = np.int64(-1)")
                specs = self.row_specs(d)
                for x in sorted({specs[i][0] for i in self.tag_depths[d]}):
                    e(1, f"tv{d}_{x} = np.int64(-1)")
        ind = 1
        if gs == k:                         # no group: the last depth is counted
            for d in range(2, k - 1):
                ind = self.scan(d, ind)
                e(ind, f"m{d} = c")
            self.scan(k - 1, ind, count="n")
        else:
            comps = self.comps()
            deps = [self.comp_dep(c) for c in comps]
            for ci, comp in enumerate(comps):   # kept counts: defined on every path
                if deps[ci] < gs - 1:
                    e(1, f"h{ci} = False")
                    for g in comp:
                        e(1, f"k{g} = np.int64(0)")
                    e(1, f"x{ci} = np.int64(0)")
            for d in range(2, gs):
                ind = self.scan(d, ind)
                e(ind, f"m{d} = c")
                for ci in range(len(comps)):
                    if deps[ci] == d and d < gs - 1:
                        e(ind, f"h{ci} = False")    # a new vertex there: count again
            self.group_count(comps, deps, ind)
        e(1, "return n")
        return "\n".join(self.lines)


def plan_source(plans: Any, j: int, name: str) -> str:
    """The Python source of plan ``j``'s search, a function ``name(T, s0, s1, _x)``.

    ``T`` is the address of the search's address table (:func:`._cpu_rows.view_table`
    of storage rows), ``s0``, ``s1`` the update's endpoints (internal ids); it
    returns the raw count of plan ``j`` on the stores as they are, what
    :func:`._cpu_delta._task` returns for it. ``_x`` is the address of two int64s,
    the tag block's address and its row stride (:meth:`_Gen.tag_scan`: ``TAG_ROWS``
    rows of at least the vertex count plus one int32s, the caller's scratch, which
    it never needs to clear), read only by plans with tagged depths. The caller
    checks eligibility.
    """
    return _Gen(plans, j).source(name)


_HEADER = '''"""Generated by warpmatch.stream._seq_special: the compiled searches of one
delta plan set. Do not edit; delete the directory to
recompile."""
import numpy as np
from numba import cfunc
from warpmatch.engine._raw import ld32, ld64, st32
from warpmatch.stream._seq_special import _row, _has, _mbit, _low as _lower, _seek

BIG = np.int64({big})
INT64_MAX = np.int64({i64})
SIG = "int64(int64, int64, int64, int64)"
'''


def module_source(plans: Any, local: bool) -> tuple[str, list[int]]:
    """The source of a module compiling every eligible plan of ``plans``, and their
    indices. Plan ``j`` becomes the C function ``plan_j``."""
    path = path_plans(plans)
    take = [j for j in range(plans.num_plans) if plan_eligible(plans, j, local, path)]
    parts = [_HEADER.format(big=int(BIG), i64=int(INT64_MAX))]
    rows = 0
    for j in take:
        gen = _Gen(plans, j)
        parts.append("\n@cfunc(SIG, cache=True, nogil=True)\n" + gen.source(f"plan_{j}"))
        rows = max(rows, len(gen.tag_depths))
    parts.append(f"\n#: rows of the tag block the plans use (the caller's scratch)\nTAG_ROWS = {rows}")
    return "\n".join(parts) + "\n", take
