"""Delta plans compiled to machine code, one function per plan, for the sequential CPU path.

Map: eligibility (:func:`plan_eligible`) < source of one plan's search
(:func:`plan_source`, via :class:`_Gen`) < a module of every eligible plan of a plan
set (:func:`module_source`) < compiling and caching it (:func:`compile_plans` ->
:class:`SpecialPlans`: each plan's C function address, what
:func:`._seq_kernels.seq_run` calls) < the row helpers the generated code inlines
(:func:`_row`, :func:`_has`, :func:`_mbit`; binary search and galloping are
:mod:`._cpu_rows`' ``_lower`` and ``gallop``).

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
builds none for the query), is no path plan (:func:`._cpu_rows.path_plans`), has
a counting group of at most two vertices (one is counted by a scan, two by
``|C1| |C2| - |C1 ∩ C2|``, the second term only where their candidates can
coincide), and has none of the shapes where the interpreter's row tags and cached
group counts win (:meth:`_Gen.pays`). Other plans keep the interpreting kernel.

Compiling costs 0.3-1.2 s a plan (numba; 2-core box; up to 2.2 s on the H200 host);
the module is written to a cache directory (``$XDG_CACHE_HOME/warpmatch/cpu-plans``,
default ``~/.cache/...``) under the hash of its source and of the helpers' files, and
numba caches the compiled code beside it, so a query structure compiles once per machine
and version. When to compile is the engine's
choice (:class:`~warpmatch.stream.cpu.CpuDeltaEngine`'s ``specialise``).

How it differs from the interpreting kernel (same counts):

- Each depth's scan keeps its state in locals; a candidate is tested against the
  matched vertices it can equal only (not a backward neighbour, labels that can
  agree), and the restriction bounds clip the scan instead of being tested again.
- A single group vertex's count is not cached across the deeper core depths (the
  interpreting kernel's ``_cached``): recounted per partial match.
- Storage rows only: the sequential path has no overlay (the batch path keeps the
  interpreting kernel).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from ..engine._raw import ld32, ld64
from ._cpu_rows import (BIG, T_BD, T_BL, T_BN, T_BS, T_ID, T_IL, T_IN, T_IS, T_MASK, T_NS,
                        _lower, path_plans)

__all__ = ["SpecialPlans", "compile_plans", "is_cached", "plan_eligible", "plan_source",
           "module_source", "cache_dir"]

#: largest counting group the generated code counts (larger groups: not eligible)
GROUP_MAX_SPECIAL = 2


# ------------------------------------------------------------- inlined row helpers
@njit(cache=True, nogil=True, inline="always")
def _row(start_p, deg_p, ns, x):
    """``(lo, hi)`` of storage row ``x`` (empty for a vertex without a storage row)."""
    if x >= ns:
        return np.int64(0), np.int64(0)
    lo = ld64(start_p, x)
    return lo, lo + ld32(deg_p, x)


@njit(cache=True, nogil=True, inline="always")
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


@njit(cache=True, nogil=True, inline="always")
def _mbit(mask_p, c, u):
    """Does the filter's mask let data vertex ``c`` be query vertex ``u``?"""
    return (ld64(mask_p, c) >> u) & 1 != 0


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
    if k - gs > GROUP_MAX_SPECIAL:
        return False
    if k - gs == 2:
        # the group is unbroken: no restriction may join its two vertices
        for d in (gs, gs + 1):
            lo, hi = int(plans.res_ptr[j, d]), int(plans.res_ptr[j, d + 1])
            if any(int(x) >= gs for x in plans.res_pos[lo:hi]):
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

    def checks(self, d: int, ind: int, back: bool, skip: str) -> None:
        """The tests of candidate ``c`` at depth ``d`` (``skip`` on failure): its mask
        bit, the matched vertices it can equal, with ``back`` its backward edges (a
        scan of the depth's rows holds ``c`` in each already), the required
        non-edges."""
        self.emit(ind, f"if not _mbit(mk_, c, {self.order[d]}):")
        self.emit(ind + 1, skip)
        eq = self.may_equal(d, min(d, self.gs))
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
        """Whether compiling this plan beats the interpreting kernel, by its shape.

        The interpreter has two tricks this code does not: a row that stays fixed
        while a deeper loop runs is tagged once and probed per candidate
        (``_cpu_group._intersect``), and a group vertex whose candidates depend
        only on shallower depths is counted once and corrected per partial match
        (``_cached``). Merging such a row again per iteration, or recounting such
        a group, measured 0.67-0.8x the interpreter (email-Eu-core: square,
        diamond, tailed triangle); those plans stay with it."""
        self.pair = self.choose_pair()
        k, gs = self.k, self.gs
        for d in range(3, k):
            rows = [b for b, _, _ in self.back(d)
                    if not (self.uses_pair(d) and b in (0, 1))]
            n_rows = len(rows) + (1 if self.uses_pair(d) else 0)
            if n_rows >= 2 and any(b < d - 1 for b in rows):
                return False
        if gs >= 3:
            for d in range(gs, k):
                above, below = self.res(d)
                dep = max([1, *(b for b, _, _ in self.back(d)), *above, *below])
                if dep < gs - 1:
                    return False
        return True

    def uses_pair(self, d: int) -> bool:
        """Does depth ``d`` scan the update endpoints' common neighbours (the buffer
        ``pb``, :meth:`source`)? Where its backward edges to positions 0 and 1 are
        the ones the buffer was made for."""
        if self.pair is None:
            return False
        got = {b: (dr, lab) for b, dr, lab in self.back(d) if b in (0, 1)}
        return got.get(0) == self.pair[0] and got.get(1) == self.pair[1]

    def scan(self, d: int, ind: int) -> int:
        """Open the scan of depth ``d``'s candidates ``c``; returns the indentation of the
        loop body, where ``c`` passed every test of the depth.

        The depth's rows are its backward rows, with the rows of positions 0 and 1
        replaced by their intersection (the buffer ``pb``) where :meth:`uses_pair`.
        The shortest row generates (clipped by the restriction bounds); the others
        are merged with it through cursors that only move forward (galloping),
        since the candidates ascend; a cursor at its row's end ends the scan."""
        rows = []           # (lo, hi, neighbour array, label array, edge label) names
        e = self.emit
        pair = self.uses_pair(d)
        if pair:
            rows.append(("np.int64(0)", "npb", "pb_", "np.int64(0)", -1))
        for b, dr, lab in self.back(d):
            if pair and b in (0, 1):
                continue
            i = len(rows)
            st, dg, nb, lb = self.names(dr)
            e(ind, f"a{i}_{d}, e{i}_{d} = _row({st}, {dg}, ns, m{b})")
            rows.append((f"a{i}_{d}", f"e{i}_{d}", nb, lb, lab))
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
        lo0, hi0, nb0, lb0, lab0 = rows[0]
        e(ind, f"{g} = 0")
        e(ind, f"zl{d}, zh{d}, gn{d}, gl{d}, ge{d} = {lo0}, {hi0}, {nb0}, {lb0}, {lab0}")
        for i in range(1, len(rows)):
            lo, hi, nb, lb, lab = rows[i]
            e(ind, f"if {hi} - {lo} < zh{d} - zl{d}:")
            e(ind + 1, f"{g} = {i}")
            e(ind + 1, f"zl{d}, zh{d}, gn{d}, gl{d}, ge{d} = {lo}, {hi}, {nb}, {lb}, {lab}")
        e(ind, f"if {lo_v} >= 0:")
        e(ind + 1, f"zl{d} = _lower(gn{d}, zl{d}, zh{d}, {lo_v} + 1)")
        if len(rows) > 1:
            for i, (lo, _h, _n, _l, _b) in enumerate(rows):
                e(ind, f"q{i}_{d} = {lo}")
        e(ind, f"for z{d} in range(zl{d}, zh{d}):")
        body = ind + 1
        e(body, f"c = ld32(gn{d}, z{d})")
        e(body, f"if c >= {hi_v}:")
        e(body + 1, "break")
        if any(r[4] != -1 for r in rows):
            e(body, f"if ge{d} != -1 and (ld32(gl{d}, z{d}) if gl{d} != 0 else 0) != ge{d}:")
            e(body + 1, "continue")
        if len(rows) > 1:
            # the other rows, merged: ``c`` must be in each
            e(body, "hit = True")
            for i, (_lo, hi, nb, lb, lab) in enumerate(rows):
                e(body, f"if {g} != {i}:")
                self.probe(body + 1, f"q{i}_{d}", hi, nb, lb, lab, "hit = False")
            e(body, "if not hit:")
            e(body + 1, "continue")
        self.checks(d, body, False, "continue")
        return body

    def member(self, d: int, ind: int, skip: str) -> None:
        """Is ``c`` (a candidate of the other group depth) also a candidate of ``d``?"""
        above, below = self.res(d)
        for x in above:
            self.emit(ind, f"if c <= m{x}:")
            self.emit(ind + 1, skip)
        for x in below:
            self.emit(ind, f"if c >= m{x}:")
            self.emit(ind + 1, skip)
        self.checks(d, ind, True, skip)

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
        ind = 1
        core_end = gs if k - gs == 2 else k - 1
        for d in range(2, core_end):
            ind = self.scan(d, ind)
            e(ind, f"m{d} = c")
        if k - gs == 2:
            g1, g2 = gs, gs + 1
            same = int(p.gcomp[j, g1]) == int(p.gcomp[j, g2]) and int(p.gcomp[j, g1]) >= 0
            e(ind, "n1 = np.int64(0)")
            e(ind, "nb = np.int64(0)")
            body = self.scan(g1, ind)
            e(body, "n1 += 1")
            if same:
                self.member(g2, body, "continue")
                e(body, "nb += 1")
            e(ind, "if n1 != 0:")
            e(ind + 1, "n2 = np.int64(0)")
            body = self.scan(g2, ind + 1)
            e(body, "n2 += 1")
            e(ind + 1, "n += n1 * n2 - nb")
        else:
            body = self.scan(k - 1, ind)
            e(body, "n += 1")
        e(1, "return n")
        return "\n".join(self.lines)


def plan_source(plans: Any, j: int, name: str) -> str:
    """The Python source of plan ``j``'s search, a function ``name(T, s0, s1, _x)``.

    ``T`` is the address of the search's address table (:func:`._cpu_rows.view_table`
    of storage rows), ``s0``, ``s1`` the update's endpoints (internal ids); it
    returns the raw count of plan ``j`` on the stores as they are, what
    :func:`._cpu_delta._task` returns for it (``_x`` is unused: the C signature
    of :func:`~warpmatch.engine._raw.call_i64x4`). The caller checks eligibility.
    """
    return _Gen(plans, j).source(name)


_HEADER = '''"""Generated by warpmatch.stream._seq_special: the compiled searches of one
delta plan set. Do not edit; delete the directory to
recompile."""
import numpy as np
from numba import cfunc
from warpmatch.engine._raw import ld32, ld64
from warpmatch.stream._cpu_rows import _lower, gallop as _seek
from warpmatch.stream._seq_special import _row, _has, _mbit

BIG = np.int64({big})
SIG = "int64(int64, int64, int64, int64)"
'''


def module_source(plans: Any, local: bool) -> tuple[str, list[int]]:
    """The source of a module compiling every eligible plan of ``plans``, and their
    indices. Plan ``j`` becomes the C function ``plan_j``."""
    path = path_plans(plans)
    take = [j for j in range(plans.num_plans) if plan_eligible(plans, j, local, path)]
    parts = [_HEADER.format(big=int(BIG))]
    for j in take:
        parts.append("\n@cfunc(SIG, cache=True, nogil=True)\n" + plan_source(plans, j, f"plan_{j}"))
    return "\n".join(parts) + "\n", take


# ------------------------------------------------------------------ compiling
def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/warpmatch/cpu-plans`` (default ``~/.cache/warpmatch/cpu-plans``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warpmatch" / "cpu-plans"


@dataclass
class SpecialPlans:
    """The compiled searches of one plan set.

    Attributes
    ----------
    addr : numpy.ndarray
        int64 per plan: the C function's address, 0 where the plan is not
        compiled (the interpreting kernel searches it).
    plans : list of int
        The compiled plans.
    seconds : float
        Time spent compiling (or loading from numba's cache) in this process.
    cached : bool
        Whether the module was found compiled on disk (no numba compilation).
    path : Path or None
        The generated module's file.
    """

    addr: np.ndarray
    plans: list[int]
    seconds: float = 0.0
    cached: bool = False
    path: Path | None = None
    _keep: list = field(default_factory=list, repr=False)


_LOCK = threading.Lock()
_LOADED: dict[str, SpecialPlans] = {}


_HELPERS: list[bytes] = []


def _key(source: str) -> str:
    """The module's cache key: its source and the sources of the helpers it inlines.

    numba's cache checks only the cached function's own file, so a module compiled
    against older helpers (``_row``, ``_has``, ``_lower``, the raw loads) would be
    loaded unchanged after an upgrade; their files are therefore part of the key (this
    module's own among them, so a change of the generator recompiles too)."""
    if not _HELPERS:
        from ..engine import _raw
        from . import _cpu_rows
        _HELPERS.extend(Path(m.__file__).read_bytes()
                        for m in (sys.modules[__name__], _cpu_rows, _raw))
    h = hashlib.sha256(source.encode())
    for b in _HELPERS:
        h.update(b)
    return h.hexdigest()[:24]


def is_cached(plans: Any, local: bool) -> bool:
    """Whether ``plans``' module was compiled before (in this process, or on disk with
    numba's cache files beside it)."""
    src, take = module_source(plans, local)
    if not take:
        return True
    key = _key(src)
    if key in _LOADED:
        return True
    return _on_disk(cache_dir() / f"m{key}")


def _on_disk(d: Path) -> bool:
    """Whether numba's cache files for the module in ``d`` exist."""
    return (d / "__pycache__").is_dir() and any((d / "__pycache__").glob("*.nbi"))


def _write(d: Path, src: str) -> Path:
    """``d/plans.py`` holding ``src`` (written atomically: another process may read it)."""
    d.mkdir(parents=True, exist_ok=True)
    path = d / "plans.py"
    if not path.exists() or path.read_text() != src:
        tmp = d / f".plans.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(src)
        os.replace(tmp, path)
    return path


def compile_plans(plans: Any, local: bool, cached_only: bool = False
                  ) -> SpecialPlans | None:
    """Compile every eligible plan of ``plans`` (once per process and source; numba's
    disk cache makes later processes load them).

    Parameters
    ----------
    cached_only : bool, optional
        Return ``None`` instead of compiling when the module was not compiled
        before (:func:`is_cached`), e.g. ``specialise="auto"`` building a matcher.

    Returns
    -------
    SpecialPlans or None
        ``addr`` all zeros when no plan is eligible.
    """
    src, take = module_source(plans, local)
    P = int(plans.num_plans)
    if not take:
        return SpecialPlans(np.zeros(P, np.int64), [])
    key = _key(src)
    with _LOCK:
        hit = _LOADED.get(key)
        if hit is not None:
            return hit
        d = cache_dir() / f"m{key}"
        cached = _on_disk(d)
        if cached_only and not cached:
            return None
        t0 = time.perf_counter()
        try:
            path = _write(d, src)
        except OSError as exc:          # no writable cache: this process's own directory
            warnings.warn(f"cannot write compiled delta plans under {d} ({exc}); "
                          "compiling them for this process only", RuntimeWarning,
                          stacklevel=2)
            path = _write(Path(tempfile.mkdtemp(prefix="warpmatch-cpu-plans-")), src)
            cached = False
        name = f"_warpmatch_cpu_plans_{key}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        addr = np.zeros(P, np.int64)
        keep = []
        for j in take:
            fn = getattr(mod, f"plan_{j}")
            keep.append(fn)
            addr[j] = fn.address
        out = SpecialPlans(addr, take, time.perf_counter() - t0, cached, path, keep)
        _LOADED[key] = out
        return out
