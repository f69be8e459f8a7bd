"""Render a :class:`~warpmatch.plan.Plan` into query-specialised CUDA C++.

The GPU engine compiles its kernels at run time with NVRTC (DESIGN.md, "GPU
engine"). The kernels in ``kernels/*.cu`` are generic over the plan: they call
a handful of device functions that this module generates from the plan's
arrays, with every per-depth fact (label, degree bound, backward neighbours
and their directions and edge labels, induced non-edges, symmetry
restrictions) written as a compile-time constant. Each depth ``d`` gets

``wm_check_d{d}(c, gen, gpos, m0, ..., m{d-1})``
    the fine-grained task of gMatch section 4.1: may data vertex ``c`` extend
    the partial match ``m0..m{d-1}`` at depth ``d``? (Plan rules 1-8; rule 8,
    the inter-partition search's DupRemove, only in plans with ``cut_part``.) ``gen``
    names the list ``c`` was drawn from and ``gpos`` its position there, so the
    generating backward edge needs no binary search, only its label check;
``wm_gen_d{d}(m0, ..., m{d-1}, gen, start, len, skip)``
    the local candidate set of gMatch section 4.1: the shortest of the
    backward neighbours' adjacency lists (or the depth's explicit candidate
    set, if that is shorter), cut by binary search to the range the depth's
    symmetry restrictions allow (``skip`` entries dropped at its front);
``wm_arr_d{d}`` / ``wm_elem_d{d}`` / ``wm_gen_start_d{d}``
    the array of a list, element access and the list's start, from its code, so
    a warp's stack stores only the list's code (one byte), skip and length,
    never the list itself;
``wm_leaf_count(m0, ..., m{f-1})``
    count mode only, from depth ``f`` = :func:`leaf_first` on: for plans whose last
    vertex is a plain leaf (:func:`leaf_countable`, ``f = k - 1``) the number of its
    matches, counted from the list instead of checked lane by lane; for a group of
    bare leaves (:func:`warpmatch.plan.leaves.bare_group`) the matches of all of them,
    from the sizes of their lists and of the lists' intersections
    (:func:`.render_leaves.render_group`); for leaves with tests, from a per-vertex table
    (:func:`table_leaves`, :func:`.render_leaves.render_table`).
``wm_warp_group(r, lane)``
    instead, for twins (:func:`twin_leaves`) or independent vertices
    (:func:`indep_leaves`; :func:`warp_group` says which): their matches below the
    partial match ``r``, the whole warp intersecting their lists
    (:func:`.render_leaves.render_twins`, :func:`.render_leaves.render_indep`).

The partial match is passed as scalars: the kernels rebuild it from parent
indices (gMatch section 4.2) in fully unrolled generated code, so it lives in
registers and is never indexed at run time. Dispatchers ``wm_stack_task``
(rebuild from a warp's shared-memory stack), ``wm_row_task`` and
``wm_row_gen`` (from a materialised row, for the BFS phase and the coarse
model) switch on the run-time depth.

The rendered text depends only on the plan's structure, not on the data graph
or the candidate arrays (read from device memory), so it is the cache key; what
is derived from the structure (:func:`depth_specs`, :func:`plan_signature`, the
generic module's table) is computed once per structure (:func:`memo`): a search
cut into shards, each a new Plan of the same structure, renders nothing again.
"""
from __future__ import annotations

import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...plan.plan import Plan

#: gen code of a depth's explicit candidate set (backward neighbours use 0..nb-1)
CAND_GEN = 254
#: gen code of a candidate drawn from none of a depth's lists (an independent vertex's,
#: tested on another member's list: :func:`.render_leaves.render_indep`): every backward
#: edge and the candidate set are searched
NO_GEN = 253


@dataclass(frozen=True)
class DepthSpec:
    """The compile-time facts of one depth, read off the plan arrays."""

    vlabel: int
    min_out: int
    min_in: int
    bn: tuple[tuple[int, int, int], ...]    # (pos, dir, elabel)
    na: tuple[tuple[int, int], ...]         # (pos, dir)
    res: tuple[tuple[int, int], ...]        # (pos, sign)
    restricted: bool


#: the plan fields the rendered source is made of (with ``k``, ``directed`` and rule 8's
#: presence and prime edge): what :func:`plan_structure` keys on
_STRUCTURE_FIELDS = ("vlabel", "min_out_deg", "min_in_deg", "bn_ptr", "bn_pos", "bn_dir",
                     "bn_elabel", "na_ptr", "na_pos", "na_dir", "res_ptr", "res_pos",
                     "res_sign", "cand_restricted")
#: structures whose derived facts are kept (least recently used dropped first)
_MEMO_MAX = 64
_MEMO: "OrderedDict[tuple, dict[str, Any]]" = OrderedDict()
#: each live plan's key (plans are immutable): computed once per plan object
_KEYS: "weakref.WeakKeyDictionary[Plan, tuple]" = weakref.WeakKeyDictionary()


_PART_TYPES: "weakref.WeakKeyDictionary[Plan, str]" = weakref.WeakKeyDictionary()


def part_ctype(plan: Plan) -> str | None:
    """The C type of rule 8's part ids on the device: ``"unsigned char"`` with at most
    256 parts (a quarter of the bytes: the inter search's budget is small, and every
    candidate reads its part), else ``"int"``; ``None`` without ``cut_part``."""
    if plan.cut_part is None:
        return None
    t = _PART_TYPES.get(plan)
    if t is None:
        top = int(plan.cut_part.max(initial=0))
        t = _PART_TYPES[plan] = "unsigned char" if top < 256 else "int"
    return t


def part_dtype(plan: Plan) -> Any:
    """The numpy dtype of :func:`part_ctype` (``None`` without ``cut_part``)."""
    t = part_ctype(plan)
    return None if t is None else (np.uint8 if t == "unsigned char" else np.int32)


def part_nbytes(plan: Plan) -> int:
    """Device bytes of rule 8's part ids (:func:`part_dtype`; 0 without ``cut_part``)."""
    dt = part_dtype(plan)
    return 0 if dt is None else int(plan.cut_part.size) * np.dtype(dt).itemsize


def plan_structure(plan: Plan) -> tuple:
    """A hashable key of everything in ``plan`` that its rendered source depends on (not
    its candidate sets or roots): plans with equal keys render the same text."""
    key = _KEYS.get(plan)
    if key is None:
        parts: list[Any] = [int(plan.k), bool(plan.directed), part_ctype(plan),
                            int(plan.cut_prime), int(plan.cut_depth),
                            plan.cut_graph is not None]
        for name in _STRUCTURE_FIELDS:
            a = np.asarray(getattr(plan, name))
            parts.append((a.dtype.str, a.tobytes()))
        key = _KEYS[plan] = tuple(parts)
    return key


def memo(plan: Plan, what: str, make: Callable[[], Any]) -> Any:
    """``make()``, computed once per plan structure (:func:`plan_structure`) and ``what``.

    The GPU engine derives per-depth constants, a source signature and the generic
    module's table from every plan it runs; each costs about a millisecond in Python, as
    much as a small search, and a Dask worker runs many plans of one structure (one per
    shard). The results must not be mutated by callers.
    """
    key = plan_structure(plan)
    ent = _MEMO.get(key)
    if ent is None:
        ent = _MEMO[key] = {}
        if len(_MEMO) > _MEMO_MAX:
            _MEMO.popitem(last=False)
    else:
        _MEMO.move_to_end(key)
    if what not in ent:
        ent[what] = make()
    return ent[what]


def depth_specs(plan: Plan) -> list[DepthSpec]:
    """Per-depth constants of ``plan`` (see the Plan docstring, rules 1-7); computed once
    per plan structure (do not mutate the list)."""
    return memo(plan, "specs", lambda: _depth_specs(plan))


def _depth_specs(plan: Plan) -> list[DepthSpec]:
    specs = []
    for d in range(plan.k):
        b0, b1 = int(plan.bn_ptr[d]), int(plan.bn_ptr[d + 1])
        n0, n1 = int(plan.na_ptr[d]), int(plan.na_ptr[d + 1])
        r0, r1 = int(plan.res_ptr[d]), int(plan.res_ptr[d + 1])
        specs.append(DepthSpec(
            vlabel=int(plan.vlabel[d]),
            min_out=int(plan.min_out_deg[d]),
            min_in=int(plan.min_in_deg[d]),
            bn=tuple((int(plan.bn_pos[t]), int(plan.bn_dir[t]), int(plan.bn_elabel[t]))
                     for t in range(b0, b1)),
            na=tuple((int(plan.na_pos[t]), int(plan.na_dir[t])) for t in range(n0, n1)),
            res=tuple((int(plan.res_pos[t]), int(plan.res_sign[t])) for t in range(r0, r1)),
            restricted=bool(plan.cand_restricted[d]),
        ))
    return specs


def _ms(d: int) -> str:
    return ", ".join(f"m{j}" for j in range(d))


def _ms_params(d: int) -> str:
    return ", ".join(f"int m{j}" for j in range(d))


def _key(x: str, y: str, directed: bool) -> tuple[str, str]:
    """The edge order's key of data edge ``x -> y`` (``(min, max)`` if undirected)."""
    return (x, y) if directed else (f"min({x}, {y})", f"max({x}, {y})")


def _prime(d: int, directed: bool, prime: int, cdepth: int) -> str:
    """``px_, py_``: rule 8's prime data edge at depth ``d >= cdepth`` (``c`` is
    ``M[cdepth]`` at ``cdepth``), as the edge order compares it."""
    mj = "c" if d == cdepth else f"m{cdepth}"
    x, y = ("m0", mj) if prime == 0 else (mj, "m0")
    kx, ky = _key(x, y, directed)
    return f"    const int px_ = {kx}, py_ = {ky};"


def _cut(d: int, specs: list[DepthSpec], directed: bool, prime: int,
         cdepth: int) -> list[str]:
    """Rule 8 at depth ``d`` (inter-partition plans): the prime edge joins ``m0`` and
    ``M[cdepth]`` across parts, every other crossing edge comes after it (DupRemove); the
    edges of depths before ``cdepth`` are checked at ``cdepth``, where the prime is known."""
    if d < cdepth:
        return []
    out = ["  {"]
    if d == cdepth:
        out.append("    if (WM_PART(c) == WM_PART(m0)) return false;")
    out.append(_prime(d, directed, prime, cdepth))
    for dd in (range(1, d + 1) if d == cdepth else (d,)):
        y = "c" if dd == d else f"m{dd}"
        for pos, dr, _el in specs[dd].bn:
            if dd == cdepth and pos == 0 and (not directed or dr == prime):
                continue                        # the prime edge itself
            kx, ky = _key(*((f"m{pos}", y) if dr == 0 else (y, f"m{pos}")), directed)
            out.append(f"    if (WM_PART(m{pos}) != WM_PART({y}) && "
                       f"!wm_after({kx}, {ky}, px_, py_)) return false;")
    out.append("  }")
    return out


def _check(d: int, specs: list[DepthSpec], directed: bool, cut: int = -1,
           cdepth: int = 1) -> str:
    s = specs[d]
    params = "int c, int gen, long long gpos" + (", " + _ms_params(d) if d else "")
    out = [f"__device__ __forceinline__ bool wm_check_d{d}({params}) {{",
           "  (void)gen; (void)gpos;"]
    # cheapest tests first: label, restrictions, injectivity, degree, set, edges
    if s.vlabel != -1:
        out.append(f"  if (g.vlab[c] != {s.vlabel}) return false;")
    for pos, sign in s.res:
        out.append(f"  if (!(c {'>' if sign == 1 else '<'} m{pos})) return false;")
    # adjacency (no self-loops) and strict restrictions already imply c != M[j]
    implied = {pos for pos, _, _ in s.bn} | {pos for pos, _ in s.res}
    rest = [j for j in range(d) if j not in implied]
    if rest:
        out.append("  if (" + " || ".join(f"c == m{j}" for j in rest) + ") return false;")
    for ip, lo in degree_bounds(s, directed):
        out.append(f"  if ({ip}[c + 1] - {ip}[c] < {lo}) return false;")
    if d > 0 and s.restricted:
        out.append(f"  if (gen != {CAND_GEN} && !wm_in_sorted(g.cand_ids, g.cand_ptr[{d}], "
                   f"g.cand_ptr[{d + 1}], c)) return false;")
    for t, (pos, dr, el) in enumerate(s.bn):
        lab_arr = "g.elab" if dr == 0 else "g.in_elab"
        if el != -1:
            out.append(f"  if (gen == {t}) {{ if ({lab_arr}[gpos] != {el}) return false; }}")
            out.append(f"  else if (!wm_bedge(m{pos}, c, {dr}, {el})) return false;")
        else:
            out.append(f"  if (gen != {t} && !wm_bedge(m{pos}, c, {dr}, -1)) return false;")
    for pos, dr in s.na:
        out.append(f"  if (wm_bedge(m{pos}, c, {dr}, -1)) return false;")
    if cut >= 0 and d > 0:
        out += _cut(d, specs, directed, cut, cdepth)
    out.append("  return true;")
    out.append("}")
    return "\n".join(out)


def degree_bounds(s: DepthSpec, directed: bool) -> list[tuple[str, int]]:
    """The degree bounds depth ``s`` must test, as ``(row pointer array, least degree)``.

    A bound that the backward edges already imply (the candidate adjacent to that many
    distinct matched vertices) costs two random loads for nothing: at the last depth,
    where most tasks are, it is always implied, so it is left out."""
    if directed:
        n_in = sum(1 for _, dr, _ in s.bn if dr == 0)    # M[j] -> c
        n_out = len(s.bn) - n_in                          # c -> M[j]
        return ([("g.indptr", s.min_out)] if s.min_out > n_out else []) + \
            ([("g.in_indptr", s.min_in)] if s.min_in > n_in else [])
    lo = max(s.min_out, s.min_in)
    return [("g.indptr", lo)] if lo > len(s.bn) else []


def trims(s: DepthSpec) -> bool:
    """Whether depth ``s``'s candidate list is cut to its symmetry-restriction range.

    Adjacency lists and candidate sets are sorted, so the candidates ``c > M[j]``
    (``c < M[j]``) of any list form one contiguous range, found by binary search
    when the list is generated: the tasks the restrictions would reject are never
    handed out (half of a clique's tasks at every depth, more below).
    """
    return bool(s.res)


def plan_trims(plan: Plan) -> bool:
    """Whether some depth's candidate lists are cut by :func:`trims` (``WM_TRIM``: the
    warp stack then keeps each entry's offset into its list, 4 more bytes)."""
    return memo(plan, "trims", lambda: any(trims(s) for s in depth_specs(plan)[1:]))


def leaf_countable(plan: Plan) -> bool:
    """Whether count mode may count the last depth's candidates without checking each
    (:func:`_leaf_countable`; once per plan structure)."""
    return memo(plan, "leaf", lambda: _leaf_countable(plan))


def _leaf_countable(plan: Plan) -> bool:
    """Whether count mode may count the last depth's candidates without checking each.

    True when the last query vertex hangs off one matched vertex ``M[j]`` by an
    unlabeled edge and carries no vertex label, candidate set, induced non-edge
    or degree bound beyond the one its edge implies: then its matches are the
    (restriction-trimmed) list of ``M[j]`` minus the already-matched vertices in
    it, counted with a binary search per matched vertex instead of one lane per
    list entry (the tail of a tailed triangle at a hub: thousands of tasks).
    """
    k = int(plan.k)
    # rule 8 checks every candidate, except a plain leaf's when the plan carries the cut
    # neighbours' lists (two binary searches in them say how many its edge excludes)
    if k < 2 or (plan.cut_part is not None and (plan.cut_graph is None or k < 3)):
        return False
    s = depth_specs(plan)[k - 1]
    if s.vlabel != -1 or len(s.bn) != 1 or s.na or s.restricted or s.bn[0][2] != -1:
        return False
    if not plan.directed:
        return max(s.min_out, s.min_in) <= 1
    # c in N_out(M[j]) gives c one in-edge (and symmetrically)
    if s.bn[0][1] == 0:
        return s.min_out == 0 and s.min_in <= 1
    return s.min_in == 0 and s.min_out <= 1


#: which groups of bare leaves count mode counts (``GpuEngine(leaf_groups=...)``): none,
#: alike leaves of one vertex only, those and twins and independent vertices (``"twins"``,
#: the default: :func:`warpmatch.plan.leaves.twin_group`, :func:`indep_leaves`, the whole
#: warp working on one partial match after another, :func:`.render_leaves.render_twins`,
#: :func:`.render_leaves.render_indep`), or also two or three bare leaves of different
#: vertices (``"all"``). Those leaves take one lane a list
#: intersection or two per partial match, serially: on an H100 (10^7-edge Chung-Lu graph)
#: the bull took 0.329 s counted so against 0.052 s enumerated, STMatch's pattern 10 0.571
#: against 0.142 s, so they are not the default; a 4-star's alike leaves took 0.002 s
#: against 0.033 s; twins, on the same graph, the diamond 0.011 s against 0.033 s,
#: STMatch's pattern 9 0.048 against 0.241 s (its patterns 15 and 23, 30 ms searches
#: either way, within 7%).
LEAF_GROUPS = ("none", "alike", "twins", "all")
#: what ``GpuEngine`` counts unless told (:data:`LEAF_GROUPS`)
DEFAULT_GROUPS = "twins"


def leaf_groups_mode(value: bool | str) -> str:
    """``GpuEngine(leaf_groups=...)`` as one of :data:`LEAF_GROUPS` (``True``: the default,
    :data:`DEFAULT_GROUPS`; ``False``: ``"none"``)."""
    if value is True:
        return DEFAULT_GROUPS
    if value is False:
        return "none"
    if value not in LEAF_GROUPS:
        raise ValueError(f"leaf_groups must be one of {LEAF_GROUPS} or a bool, got {value!r}")
    return str(value)


def leaf_first(plan: Plan, groups: str = DEFAULT_GROUPS) -> int:
    """The first depth that count mode counts instead of enumerating: the first of the
    plan's twins (:func:`twin_leaves`) where ``groups`` (:data:`LEAF_GROUPS`) admits them,
    else the first leaf of a group of bare leaves (:func:`warpmatch.plan.leaves.bare_group`,
    at least two) that ``groups`` admits, else ``k - 1`` where the last leaf is countable
    (:func:`leaf_countable`), else the first of the leaves counted from a table
    (:func:`table_leaves`), else ``k`` (none). Twins and independent vertices
    (:func:`warp_group`) come first. The same in the plan's own module and the generic
    one."""
    def make() -> int:
        from ...plan.leaves import bare_group
        k = int(plan.k)
        tw = warp_group(plan, groups)
        if tw is not None:
            return int(tw.first)
        grp = bare_group(plan, mixed=groups == "all") if groups != "none" else None
        if grp is not None and grp.first < k - 1:
            return int(grp.first)
        if leaf_countable(plan):
            return k - 1
        tab = table_leaves(plan, groups)
        return k if tab is None else int(tab.first)
    return memo(plan, f"leaf_first-{groups}-{int(table_wanted())}-{int(indep_wanted())}",
                make)


def table_wanted() -> bool:
    """Whether count mode may count labeled last leaves from a table
    (:func:`table_leaves`): not where ``$WARPMATCH_LEAF_TABLE`` is ``0`` (to compare; the
    CPU engine reads the same variable)."""
    import os
    return os.environ.get("WARPMATCH_LEAF_TABLE", "1").strip() != "0"


def table_leaves(plan: Plan, groups: str = DEFAULT_GROUPS) -> Any:
    """The plan's last leaves counted from a per-vertex table, else ``None``.

    Where the last depths are leaves of one matched vertex ``M[p]`` (one backward edge
    each, to ``p``, no induced non-edge, no restriction but a chain among themselves: a
    plain last leaf, :func:`warpmatch.plan.leaves.table_leaf`, or alike leaves,
    :func:`warpmatch.plan.leaves.alike_group`, where ``groups`` counts groups), but with
    a label, edge label, degree bound or candidate set to test, how many entries of a data
    vertex's list pass those tests does not depend on the partial match. A kernel counts
    them once per search for each candidate of ``M[p]`` (``wm_leaf_table``, a warp a
    vertex) and count mode takes ``T[M[p]]`` less the matched vertices that pass, then
    ``s``, ``s (s-1) ... (s-j+1)`` or ``C(s, j)``, where the lanes would test each entry
    of ``M[p]``'s list for every partial match. Not where the list size already counts
    them (nothing to test: :func:`leaf_countable`, bare groups), nor inter-partition
    plans. Returns a :class:`~warpmatch.plan.leaves.LeafGroup` (``first`` is ``k - 1``
    for a single leaf); ``None`` also where :func:`table_wanted` says no.
    """
    if not table_wanted():
        return None

    def make() -> Any:
        from ...plan.leaves import LeafGroup, alike_group, bare_group, table_leaf
        k = int(plan.k)
        if plan.cut_part is not None or plan.empty_reason is not None or k < 3:
            return None
        if groups != "none" and bare_group(plan, mixed=False) is None:
            grp = alike_group(plan)
            if grp is not None and grp.first < k - 1:
                return grp
        if leaf_countable(plan) or not table_leaf(plan):
            return None
        b0 = int(plan.bn_ptr[k - 1])
        return LeafGroup(k - 1, int(plan.bn_pos[b0]), int(plan.bn_dir[b0]), False)
    return memo(plan, f"table_leaves-{groups}", make)


def uses_table(plan: Plan, groups: str = DEFAULT_GROUPS) -> bool:
    """Whether count mode counts ``plan``'s last leaves from a table
    (:func:`table_leaves`, being the first counted depths: ``WM_LEAF_TAB``)."""
    tab = table_leaves(plan, groups)
    return tab is not None and leaf_first(plan, groups) == tab.first


def twin_leaves(plan: Plan, groups: str = DEFAULT_GROUPS) -> Any:
    """The plan's twins (:func:`warpmatch.plan.leaves.twin_group`: last depths with the
    same two or more backward neighbours; a label, edge labels, a candidate set and
    degree bounds allowed, the same for all of them) where ``groups`` counts them
    (``"twins"`` or ``"all"``), else ``None``."""
    if groups not in ("twins", "all"):
        return None

    def make() -> Any:
        from ...plan.leaves import twin_group
        return twin_group(plan, True, True, checks=True)
    return memo(plan, "twin_leaves", make)


def indep_wanted() -> bool:
    """Whether count mode may count independent vertices (:func:`indep_leaves`): not where
    ``$WARPMATCH_INDEPENDENT`` is ``0`` (to compare; the CPU engine reads the same
    variable)."""
    import os
    return os.environ.get("WARPMATCH_INDEPENDENT", "1").strip() != "0"


def indep_leaves(plan: Plan, groups: str = DEFAULT_GROUPS) -> Any:
    """The plan's independent last vertices counted by the whole warp
    (:func:`warpmatch.plan.leaves.indep_group`: two or three, at least one with several
    backward edges or a checked degree bound, where counting them saves scans and they
    are more depths than the plan's twins), else ``None``. With ``groups`` ``"twins"`` (the
    default) or ``"all"``, unless :func:`indep_wanted` says no;
    :func:`.render_leaves.render_indep` writes the count. H100, 10^7-edge Chung-Lu graph,
    against enumerating them: STMatch's pattern 13 2.33 -> 0.42 s, pattern 3 0.20 -> 0.10 s,
    the bull 0.052 -> 0.017 s, same counts."""
    if groups not in ("twins", "all") or not indep_wanted():
        return None

    def make() -> Any:
        from ...plan.leaves import indep_group
        return indep_group(plan, table_wanted())
    return memo(plan, f"indep_leaves-{int(table_wanted())}", make)


def warp_group(plan: Plan, groups: str = DEFAULT_GROUPS) -> Any:
    """The last depths the whole warp counts for one partial match after another
    (``WM_WARP_GROUP``): independent vertices (:func:`indep_leaves`) where the plan has
    them, else twins (:func:`twin_leaves`), else ``None``. ``LeafGroup.mixed`` tells the
    two apart."""
    grp = indep_leaves(plan, groups)
    return grp if grp is not None else twin_leaves(plan, groups)


def cut_gen(plan: Plan) -> int:
    """Which backward edge of depth ``cut_depth`` (its index there) draws its candidates
    from ``M[0]``'s cut neighbours (``Plan.cut_graph``) instead of its whole list, or -1.

    Rule 8 takes only cut neighbours of ``M[0]`` at that depth (the prime edge crosses
    parts): on a graph with communities most of a boundary vertex's list is in its own
    part (4.1% of the edges cut, 10^7- and 10^8-edge planted partitions in 6 parts), and
    every entry of it was a task that read its part and failed. Not where the prime edge
    carries a label (the check reads the label at the task's position in the whole list).
    """
    if plan.cut_part is None or plan.cut_graph is None:
        return -1
    j = int(plan.cut_depth)
    for t, (pos, dr, el) in enumerate(depth_specs(plan)[j].bn):
        if pos == 0 and (not plan.directed or dr == int(plan.cut_prime)):
            return t if el == -1 else -1
    return -1


def uses_cut_graph(plan: Plan, list_mode: bool) -> bool:
    """Whether a search of ``plan`` reads ``Plan.cut_graph``: a candidate list drawn from
    it (:func:`cut_gen`) or, counting, a last leaf counted from it (:func:`leaf_countable`)."""
    return plan.cut_part is not None and plan.cut_graph is not None and (
        cut_gen(plan) >= 0 or (not list_mode and leaf_countable(plan)))


def _gen(d: int, s: DepthSpec, cut_t: int = -1) -> str:
    """The local candidate set: the shortest backward list (gMatch section 4.1),
    cut to the range its symmetry restrictions allow (:func:`trims`). Backward edge
    ``cut_t`` (:func:`cut_gen`) reads the cut neighbours' lists instead."""
    def src(t: int, dr: int) -> tuple[str, str]:
        pre = "g.cut_" if t == cut_t else "g."
        return (pre + ("indptr" if dr == 0 else "in_indptr"),
                pre + ("indices" if dr == 0 else "in_indices"))

    out = [f"__device__ __forceinline__ const int* wm_arr_d{d}(int gen) {{",
           "  (void)gen;"]
    dirs = {dr for _, dr, _ in s.bn}
    if s.restricted:
        out.append(f"  if (gen == {CAND_GEN}) return g.cand_ids;")
    if cut_t >= 0:
        out.append(f"  if (gen == {cut_t}) return {src(cut_t, s.bn[cut_t][1])[1]};")
    if dirs == {0}:
        out.append("  return g.indices;")
    elif dirs == {1}:
        out.append("  return g.in_indices;")
    else:
        ins = [t for t, (_, dr, _) in enumerate(s.bn) if dr == 1]
        cond = " || ".join(f"gen == {t}" for t in ins)
        out.append(f"  return ({cond}) ? g.in_indices : g.indices;")
    out.append("}")
    out += [f"__device__ __forceinline__ void wm_gen_d{d}({_ms_params(d)}, int& gen, "
            "long long& start, int& len, int& skip) {",
            "  long long s, e;",
            "  skip = 0;"]
    for t, (pos, dr, _el) in enumerate(s.bn):
        ip = src(t, dr)[0]
        out.append(f"  s = {ip}[m{pos}]; e = {ip}[m{pos} + 1];")
        if t == 0:
            out.append("  gen = 0; start = s; len = (int)(e - s);")
        else:
            out.append(f"  if (e - s < len) {{ gen = {t}; start = s; len = (int)(e - s); }}")
    if s.restricted:
        out.append(f"  s = g.cand_ptr[{d}]; e = g.cand_ptr[{d + 1}];")
        out.append(f"  if (e - s < len) {{ gen = {CAND_GEN}; start = s; len = (int)(e - s); }}")
    if trims(s):
        above = [f"m{pos}" for pos, sign in s.res if sign == 1]
        below = [f"m{pos}" for pos, sign in s.res if sign != 1]
        out.append(f"  const int* a_ = wm_arr_d{d}(gen);")
        out.append("  long long lo_ = start, hi_ = start + len;")
        if above:
            out.append(f"  int b_ = {above[0]};")
            out += [f"  b_ = wm_max(b_, {m});" for m in above[1:]]
            out.append("  lo_ = wm_lower_bound(a_, lo_, hi_, b_ + 1);")
        if below:
            out.append(f"  int u_ = {below[0]};")
            out += [f"  u_ = wm_min(u_, {m});" for m in below[1:]]
            out.append("  hi_ = wm_max(lo_, wm_lower_bound(a_, lo_, hi_, u_));")
        out.append("  skip = (int)(lo_ - start); start = lo_; len = (int)(hi_ - lo_);")
    out.append("}")
    # start of a list, from its code (the stack stores code, skip and length only)
    out.append(f"__device__ __forceinline__ long long wm_gen_start_d{d}(int gen, "
               f"{_ms_params(d)}) {{")
    out.append("  switch (gen) {")
    for t, (pos, dr, _el) in enumerate(s.bn):
        out.append(f"  case {t}: return {src(t, dr)[0]}[m{pos}];")
    if s.restricted:
        out.append(f"  case {CAND_GEN}: return g.cand_ptr[{d}];")
    out.append("  }")
    out.append("  return 0;")
    out.append("}")
    out.append(f"__device__ __forceinline__ int wm_elem_d{d}(int gen, long long pos) {{")
    out.append(f"  return wm_arr_d{d}(gen)[pos];")
    out.append("}")
    return "\n".join(out)


def _in_list(specs: list[DepthSpec], j: int, pos: int, dr: int, directed: bool) -> bool:
    """Does the plan already guarantee that ``M[j]`` is in ``M[pos]``'s out-list
    (``dr == 0``) or in-list (``dr == 1``)? True when a backward edge between
    depths ``j`` and ``pos`` was checked with that orientation."""
    for a, b, want in ((j, pos, dr), (pos, j, 1 - dr)):
        # depth a holds the edge (b, dir): M[a] in N_dir(M[b])
        if any(p == b and (not directed or d == want) for p, d, _ in specs[a].bn):
            return True
    return False


def _stack_task(k: int, specs: list[DepthSpec], first: int, twins: bool = False) -> str:
    """Rebuild the partial match from a warp's stack and run one task (gMatch 4.2).

    On success at depth ``d < k - 1`` the outputs describe the candidate list
    of depth ``d + 1``; with leaf counting (``WM_LEAF``, from depth ``first`` =
    :func:`leaf_first` on) depth ``first - 1`` returns the number of its completions in
    ``ncnt`` instead, or, for twins, the partial match in ``row`` (the warp counts
    their set together, ``fine.cu``).
    """
    out = ["__device__ __forceinline__ bool wm_stack_task(int d, const WmStack& S, int e, "
           "int off, int& c, int& ngen, int& nlen, int& nskip, unsigned long long& ncnt, "
           "int* row) {",
           "  (void)ngen; (void)nlen; (void)nskip; (void)ncnt; (void)row;",
           "  switch (d) {"]
    for d in range(1, k):
        out.append(f"  case {d}: {{")
        out.append("    int i_ = e;")
        for j in range(d - 1, -1, -1):
            out.append(f"    const int m{j} = S.v[{j}][i_];" + (f" i_ = S.p[{j}][i_];" if j else ""))
        out.append(f"    const int gen = S.gen[{d - 1}][e];")
        skip = f" + S.sk[{d - 1}][e]" if trims(specs[d]) else ""
        out.append(f"    const long long gp = wm_gen_start_d{d}(gen, {_ms(d)}){skip} + off;")
        out.append(f"    c = wm_elem_d{d}(gen, gp);")
        out.append(f"    if (!wm_check_d{d}(c, gen, gp, {_ms(d)})) return false;")
        if d < k - 1:
            nxt = f"    long long ns_;\n    wm_gen_d{d + 1}({_ms(d)}, c, ngen, ns_, nlen, nskip);"
            if d == first - 1:
                out.append("#if WM_LEAF")
                if twins:
                    out.append("    " + " ".join(f"row[{j}] = m{j};" for j in range(d))
                               + f" row[{d}] = c;")
                else:
                    out.append(f"    ncnt = wm_leaf_count({_ms(d)}, c);")
                out.append("#else")
                out.append(nxt)
                out.append("#endif")
            else:
                out.append(nxt)
        else:
            for j in range(d):
                out.append(f"    row[{j}] = m{j};")
            out.append(f"    row[{d}] = c;")
        out.append("    return true;")
        out.append("  }")
    out.append("  }")
    out.append("  return false;")
    out.append("}")
    return "\n".join(out)


def _row_dispatch(k: int) -> str:
    """Depth switches over a materialised partial match ``row[0..d-1]``."""
    out = ["__device__ __forceinline__ void wm_row_gen(int d, const int* row, int& gen, "
           "long long& start, int& len, int& skip) {",
           "  gen = 0; start = 0; len = 0; skip = 0;",
           "  switch (d) {"]
    for d in range(1, k):
        args = ", ".join(f"row[{j}]" for j in range(d))
        out.append(f"  case {d}: wm_gen_d{d}({args}, gen, start, len, skip); return;")
    out.append("  }")
    out.append("}")
    out.append("__device__ __forceinline__ bool wm_row_task(int d, const int* row, int gen, "
               "long long pos, int& c) {")
    out.append("  switch (d) {")
    for d in range(1, k):
        args = ", ".join(f"row[{j}]" for j in range(d))
        out.append(f"  case {d}: c = wm_elem_d{d}(gen, pos); "
                   f"return wm_check_d{d}(c, gen, pos, {args});")
    out.append("  }")
    out.append("  return false;")
    out.append("}")
    return "\n".join(out)


def render_plan(plan: Plan, groups: str = DEFAULT_GROUPS) -> str:
    """CUDA C++ declarations specialised to ``plan`` (prepended to the kernels).

    Parameters
    ----------
    plan : Plan
        A plan with ``k >= 1``.

    groups : str, optional
        Which groups of bare leaves are counted (:data:`LEAF_GROUPS`, :func:`leaf_first`).

    Returns
    -------
    str
        Source text defining ``WM_K``, ``WM_DIRECTED``, ``WM_CAND_GEN``,
        ``WM_TRIM`` (some depth's lists are cut by :func:`trims`),
        ``WM_LEAF_OK`` and ``WM_LEAF_D`` (count mode counts from depth ``WM_LEAF_D``
        on: :func:`leaf_first`), ``WM_WARP_GROUP`` (those depths are counted by the
        whole warp: :func:`warp_group`)
        and, for rule 8, ``WM_PART_T``
        (:func:`part_ctype`). Identical plan structures give
        identical text, so the text is part of the compilation cache key.
    """
    k = int(plan.k)
    parts = [f"#define WM_K {k}",
             f"#define WM_DIRECTED {1 if plan.directed else 0}",
             f"#define WM_CAND_GEN {CAND_GEN}",
             # some depth's lists are cut to their restriction range: the stack
             # keeps each entry's skip (offset of the range in its list)
             f"#define WM_TRIM {int(plan_trims(plan))}",
             f"#define WM_LEAF_OK {int(leaf_first(plan, groups) < k)}",
             f"#define WM_LEAF_D {leaf_first(plan, groups)}",
             f"#define WM_WARP_GROUP {int(warp_group(plan, groups) is not None)}",
             f"#define WM_LEAF_TAB {int(uses_table(plan, groups))}"]
    if plan.cut_part is not None:
        parts.append(f"#define WM_PART_T {part_ctype(plan)}")
    return "\n".join(parts) + "\n"


def render_functions(plan: Plan, groups: str = DEFAULT_GROUPS) -> str:
    """The generated device functions (after ``common.cuh`` in the source; ``groups`` as
    in :func:`render_plan`)."""
    k = int(plan.k)
    specs = depth_specs(plan)
    body = []
    cut = -1 if plan.cut_part is None else int(plan.cut_prime)
    cdepth = int(plan.cut_depth)
    for d in range(k):
        body.append(_check(d, specs, bool(plan.directed), cut, cdepth))
    cut_t = cut_gen(plan)
    for d in range(1, k):
        body.append(_gen(d, specs[d], cut_t if d == cdepth else -1))
    first = leaf_first(plan, groups)
    tw = warp_group(plan, groups)
    # the counted depths' functions (render_leaves imports this module's helpers)
    from .render_leaves import (render_group, render_indep, render_leaf, render_table,
                                render_twins)
    tab = table_leaves(plan, groups)
    if tw is not None:
        render_warp = render_indep if tw.mixed else render_twins
        body.append(render_warp(k, specs, bool(plan.directed), tw))
    elif tab is not None and first == tab.first:
        body.append(render_table(k, specs, bool(plan.directed), tab))
    elif first < k - 1:
        from ...plan.leaves import bare_group
        body.append(render_group(k, specs, bool(plan.directed),
                                 bare_group(plan, mixed=groups == "all")))
    elif first == k - 1:
        body.append(render_leaf(k, specs, bool(plan.directed), cut, cdepth))
    body.append(_stack_task(k, specs, first, tw is not None))
    body.append(_row_dispatch(k))
    return "\n".join(body) + "\n"


def plan_signature(plan: Plan, groups: str = DEFAULT_GROUPS) -> str:
    """A short text that identifies the rendered source of ``plan`` (once per structure;
    ``groups`` as in :func:`render_plan`)."""
    def make() -> str:
        import hashlib
        text = render_plan(plan, groups) + render_functions(plan, groups)
        return hashlib.sha1(text.encode()).hexdigest()[:16]
    return memo(plan, f"signature-{groups}-{int(table_wanted())}-{int(indep_wanted())}",
                make)


__all__ = ["CAND_GEN", "DEFAULT_GROUPS", "DepthSpec", "LEAF_GROUPS", "NO_GEN", "cut_gen",
           "degree_bounds", "depth_specs", "indep_leaves", "indep_wanted", "leaf_countable",
           "leaf_first", "leaf_groups_mode", "memo",
           "twin_leaves", "part_ctype", "uses_cut_graph", "part_dtype", "part_nbytes",
           "plan_structure", "render_plan", "render_functions", "plan_signature",
           "table_leaves", "table_wanted", "trims", "uses_table", "warp_group"]
