"""Count mode's counted depths in query-specialised CUDA C++ (issue 21, item 3).

:mod:`.render` writes the functions that check and extend partial matches; this module
writes the ones that count the last depths of a plan instead of enumerating them, so that
a kernel's lane or warp adds a number, not one candidate at a time. Map:

- :func:`render_leaf`: ``wm_leaf_count`` for a plain last leaf (:func:`.render.leaf_countable`):
  its list's length less the matched vertices in it; under rule 8 (inter-partition plans)
  through the cut neighbours' lists (:func:`_cut_limit`).
- :func:`render_group`: ``wm_leaf_count`` for a group of bare leaves
  (:func:`warpmatch.plan.leaves.bare_group`): falling factorials or binomials of one
  list's size, or inclusion-exclusion over two or three lists.
- :func:`render_twins`: ``wm_warp_group`` for twins (:func:`warpmatch.plan.leaves.twin_group`),
  the whole warp intersecting their lists for one partial match; twins with a label, edge
  labels, a candidate set or a degree bound (the same for all of them) are tested entry by
  entry during the scan.
- :func:`render_indep`: ``wm_warp_group`` for independent vertices
  (:func:`.render.indep_leaves`), the whole warp scanning each one's shortest list and
  testing the later ones on its survivors, for inclusion-exclusion.
- :func:`render_table`: ``wm_leaf_count`` for leaves of one vertex that have a label, an
  edge label or a candidate set to test (:func:`.render.table_leaves`): from a table of
  how many entries of each candidate parent's list pass those tests, filled once per
  search by the warp-wide ``wm_tab_row`` (``bfs.cu``'s ``wm_leaf_table``).
- :func:`_row_leaf`: ``wm_row_leaf`` for the BFS phase's materialised rows.

How it differs from the papers: none of GENEVA, gMatch, PBE, GCSM or DCSM counts without
enumerating; the CPU engine's counterparts are in ``engine/_cpu_leaves.py`` and
``engine/_cpu_kernels.py`` (the same sets, so the same counts).
"""
from __future__ import annotations

from typing import Any

from .render import (CAND_GEN, NO_GEN, DepthSpec, _in_list, _key, _ms, _ms_params, _prime,
                     degree_bounds)

__all__ = ["render_leaf", "render_group", "render_indep", "render_table", "render_twins"]


def _choices(var: str, j: int, chain: bool) -> list[str]:
    """The return of a count of ``j`` alike vertices (alike leaves, twins) from a set of
    ``var`` entries: ``C(var, j)`` where restrictions chain them, else the falling
    factorial (``engine._cpu_leaves._choices`` is the CPU's)."""
    return [f"  if ({var} < {j}) return 0ull;",
            f"  return {'wm_choose' if chain else 'wm_falling'}((unsigned long long){var}, {j});"]


def table_codes(specs: list[DepthSpec], tab: Any) -> list[int]:
    """Per matched depth ``x < tab.first``: 2 where ``M[x]`` may be one of the entries the
    table counted for ``M[tab.parent]`` (look it up, test it), 0 where it cannot (the
    parent itself, or another label). :func:`render_table` writes the lookups out; the
    generic module reads these codes from its table."""
    vl = specs[tab.first].vlabel
    return [0 if x == tab.parent or (vl != -1 and specs[x].vlabel not in (-1, vl)) else 2
            for x in range(tab.first)]


def render_leaf(k: int, specs: list[DepthSpec], directed: bool, cut: int = -1,
          cdepth: int = 1) -> str:
    """``wm_leaf_count(m0..m{k-2})``: the matches of the last depth (:func:`leaf_countable`).

    Under rule 8 (``cut >= 0``) the cut neighbours of the leaf's parent below a bound
    ``t_`` (:func:`_cut_limit`) are excluded from its list, or, where the leaf's edge is
    the prime (``cdepth == k - 1``), are all it may take.
    """
    d = k - 1
    s = specs[d]
    pos, dr, _ = s.bn[0]
    implied = {pos} | {p for p, _ in s.res}
    rest = [j for j in range(d) if j not in implied]
    out = [f"__device__ __forceinline__ unsigned long long wm_leaf_count({_ms_params(d)}) {{",
           "  int gen, len, skip;",
           "  long long start;",
           f"  wm_gen_d{d}({_ms(d)}, gen, start, len, skip);",
           f"  const int* a_ = wm_arr_d{d}(gen);",
           "  int n = len;"]
    keep = cut >= 0 and cdepth == d
    if cut >= 0:
        out += _cut_limit(d, specs, directed, cut, cdepth)
        out.append("  const long long top_ = t_ < hi_v ? t_ : hi_v;")
        out.append(f"  const int n_cut = top_ > lo_v ? (int)(wm_cut_rank(m{pos}, {dr}, top_) - "
                   f"wm_cut_rank(m{pos}, {dr}, lo_v)) : 0;")
        out.append("  n = n_cut;" if keep else "  n = len - n_cut;")
    # the matched vertices that the list may hold but the match may not reuse:
    # those the plan already placed in the list are in its restriction range
    # iff they satisfy the restrictions; the others need a binary search (under rule 8,
    # one among the cut neighbours below t_ was counted with them (keep) or taken out
    # with them already)
    for j in rest:
        dec = "--n;"
        if cut >= 0:
            inside = f"(WM_PART(m{j}) != WM_PART(m{pos}) && m{j} < t_)"
            dec = f"if ({inside if keep else '!' + inside}) --n;"
        if _in_list(specs, j, pos, dr, directed):
            conds = [f"m{j} {'>' if sign == 1 else '<'} m{p}" for p, sign in s.res]
            out.append(f"  if ({' && '.join(conds)}) {{ {dec} }}" if conds else f"  {{ {dec} }}")
        else:
            out.append(f"  if (wm_in_sorted(a_, start, start + len, m{j})) {{ {dec} }}")
    out.append("  (void)a_; (void)skip;")
    out.append("  return (unsigned long long)n;")
    out.append("}")
    out.append(_row_leaf(d))
    return "\n".join(out)


def _row_leaf(f: int) -> str:
    """``wm_row_leaf(row)``: ``wm_leaf_count`` of a materialised partial match of depth
    ``f`` (the BFS phase's pool rows)."""
    return ("__device__ __forceinline__ unsigned long long wm_row_leaf(const int* row) {\n"
            "  return wm_leaf_count(" + ", ".join(f"row[{j}]" for j in range(f)) + ");\n}")


def _less_matched(var: str, name: str, pos: int, dr: int, f: int, specs: list[DepthSpec],
                  directed: bool, indent: str = "  ") -> list[str]:
    """Take out of ``var`` (the size of ``M[pos]``'s list ``a{name}``) the matched vertices
    ``m0..m{f-1}`` in that list: without a look where the plan says they are there
    (:func:`.render._in_list`), else by binary search; ``M[pos]`` itself never is (no
    self-loops)."""
    out = []
    for x in range(f):
        if x == pos:
            continue
        if _in_list(specs, x, pos, dr, directed):
            out.append(f"{indent}--{var};")
        else:
            out.append(f"{indent}if (wm_in_sorted(a{name}, lo{name}, hi{name}, m{x})) --{var};")
    return out


def _list_of(pos: int, dr: int, name: str) -> list[str]:
    """Declare ``a{name}``, ``lo{name}``, ``hi{name}``: ``M[pos]``'s out-list (``dr``
    0) or in-list (1)."""
    ip, ix = ("g.indptr", "g.indices") if dr == 0 else ("g.in_indptr", "g.in_indices")
    return [f"  const int* a{name} = {ix};",
            f"  const long long lo{name} = {ip}[m{pos}], hi{name} = {ip}[m{pos} + 1];"]


def render_group(k: int, specs: list[DepthSpec], directed: bool, grp: Any) -> str:
    """``wm_leaf_count(m0..m{f-1})`` for a group of bare leaves at depths ``f..k-1``
    (:func:`warpmatch.plan.leaves.bare_group`; ``engine._cpu_leaves`` counts the same).

    Leaves of one vertex: with ``s`` the entries of its list that are not matched
    already, ``s (s-1) ... (s-j+1)`` matches, or ``C(s, j)`` where the restrictions order
    them in a chain (none of them touches another depth). Leaves of two or three
    vertices, no restriction: inclusion-exclusion over the lists' sizes and
    intersections, each matched vertex taken out of the sets it is in.
    """
    f = int(grp.first)
    j = k - f
    out = [f"__device__ __forceinline__ unsigned long long wm_leaf_count({_ms_params(f)}) {{"]
    if not grp.mixed:
        pos, dr = int(grp.parent), int(grp.direction)
        out += _list_of(pos, dr, "0")
        out.append("  long long s = hi0 - lo0;")
        out += _less_matched("s", "0", pos, dr, f, specs, directed)
        out += _choices("s", j, grp.chain)
        out.append("}")
        out.append(_row_leaf(f))
        return "\n".join(out)
    leaves = [specs[d].bn[0][:2] for d in range(f, k)]           # (parent pos, dir)
    for i, (pos, dr) in enumerate(leaves):
        out += _list_of(pos, dr, str(i))
    out.append("  long long s_[8];")
    for i in range(j):
        out.append(f"  s_[{1 << i}] = hi{i} - lo{i};")
    out.append("  if (" + " || ".join(f"s_[{1 << i}] == 0" for i in range(j))
               + ") return 0ull;")

    def common(ids: list[int]) -> str:
        # leaves with the same parent and direction have the same set: one list each
        first: dict[tuple, int] = {}
        for i in ids:
            first.setdefault(leaves[i], i)
        distinct = list(first.values())
        if len(distinct) == 1:
            return f"s_[{1 << distinct[0]}]"
        args = ", ".join(f"a{i}, lo{i}, hi{i}" for i in distinct)
        return f"wm_common{len(distinct)}({args})"
    out.append(f"  s_[3] = {common([0, 1])};")
    if j == 3:
        out.append(f"  s_[5] = {common([0, 2])};")
        out.append(f"  s_[6] = {common([1, 2])};")
        out.append(f"  s_[7] = s_[3] && s_[5] && s_[6] ? {common([0, 1, 2])} : 0;")
    # each matched vertex is in some of the sets: out of every overlap it is in
    for x in range(f):
        terms = []
        for i, (pos, dr) in enumerate(leaves):
            if x == pos:
                continue
            if _in_list(specs, x, pos, dr, directed):
                terms.append(str(1 << i))
            else:
                terms.append(f"(wm_in_sorted(a{i}, lo{i}, hi{i}, m{x}) ? {1 << i} : 0)")
        if terms:
            out.append(f"  wm_unmatch(s_, {' | '.join(terms)}, {j});")
    if j == 2:
        out.append("  return (unsigned long long)(s_[1] * s_[2] - s_[3]);")
    else:
        out.append("  return (unsigned long long)(s_[1] * s_[2] * s_[4] - s_[3] * s_[4] "
                   "- s_[5] * s_[2] - s_[6] * s_[1] + 2 * s_[7]);")
    out.append("}")
    out.append(_row_leaf(f))
    return "\n".join(out)


def render_table(k: int, specs: list[DepthSpec], directed: bool, grp: Any) -> str:
    """The leaves of depths ``f..k-1`` counted from a per-vertex table
    (:func:`.render.table_leaves`: one leaf, or alike leaves, of ``M[p]``, with tests).

    - ``wm_tab_ok(z, p)``: may list entry ``z`` (at position ``p`` of its list) be such a
      leaf, as far as the leaf alone says (its edge label, label, degree bound, candidate
      set)?
    - ``wm_tab_row(v, lane)``: how many entries of ``v``'s list pass, the whole warp
      scanning it 32 at a time (the ``wm_leaf_table`` kernel fills ``g.leaf_tab`` so, once
      per search, for the candidates of ``M[p]``).
    - ``wm_tab_has(v, z)``: is ``z`` in ``v``'s list and passes?
    - ``wm_leaf_count(m0..m{f-1})``: ``s = T[M[p]]`` less the matched vertices that pass
      (one search each; none where the plan says the label differs), then ``s``,
      ``s (s-1) ... (s-j+1)`` or ``C(s, j)``.
    """
    f = int(grp.first)
    j = k - f
    s = specs[f]
    pos, dr = int(grp.parent), int(grp.direction)
    el = s.bn[0][2]
    ip, ix = ("g.indptr", "g.indices") if dr == 0 else ("g.in_indptr", "g.in_indices")
    tests = []
    if el != -1:
        tests.append(f"{'g.elab' if dr == 0 else 'g.in_elab'}[p] == {el}")
    if s.vlabel != -1:
        tests.append(f"g.vlab[z] == {s.vlabel}")
    tests += [f"{a}[z + 1] - {a}[z] >= {lo}" for a, lo in degree_bounds(s, directed)]
    if s.restricted:
        tests.append(f"wm_in_sorted(g.cand_ids, g.cand_ptr[{f}], g.cand_ptr[{f + 1}], z)")
    out = ["__device__ __forceinline__ bool wm_tab_ok(int z, long long p) {",
           "  (void)z; (void)p;",
           f"  return {' && '.join(tests) if tests else 'true'};",
           "}",
           "__device__ __forceinline__ int wm_tab_row(int v, int lane) {",
           f"  const long long lo = {ip}[v], hi = {ip}[v + 1];",
           "  int n = 0;",
           "  for (long long b = lo; b < hi; b += 32) {",
           "    const long long p = b + lane;",
           f"    const bool ok = p < hi && wm_tab_ok(__ldg({ix} + p), p);",
           "    n += __popc(__ballot_sync(WM_FULL, ok));",
           "  }",
           "  return n;",
           "}",
           "__device__ __forceinline__ bool wm_tab_has(int v, int z) {",
           f"  const long long hi = {ip}[v + 1];",
           f"  const long long p = wm_lower_bound({ix}, {ip}[v], hi, z);",
           f"  return p < hi && __ldg({ix} + p) == z && wm_tab_ok(z, p);",
           "}",
           f"__device__ __forceinline__ unsigned long long wm_leaf_count({_ms_params(f)}) {{",
           f"  long long n = g.leaf_tab[m{pos}];"]
    # (not the parent: no self-loops; not a vertex of another label)
    out += [f"  if (wm_tab_has(m{pos}, m{x})) --n;"
            for x, code in enumerate(table_codes(specs, grp)) if code == 2]
    out += (["  return (unsigned long long)n;"] if j == 1
            else _choices("n", j, grp.chain))
    out.append("}")
    out.append(_row_leaf(f))
    return "\n".join(out)


def render_twins(k: int, specs: list[DepthSpec], directed: bool, grp: Any) -> str:
    """``wm_warp_group(r, lane)``: the matches of the twins at depths ``f..k-1``
    (:func:`warpmatch.plan.leaves.twin_group`) below the partial match ``r[0..f-1]``, the
    same value in every lane; the whole warp calls it (``fine.cu``, ``bfs.cu``).

    Their set ``S`` is the intersection of their backward neighbours' lists: the lanes
    take the shortest list 32 entries at a time and search each entry in the others
    (a ballot counts the entries in all of them), as the enumeration's lanes check the
    first twin's candidates; then ``s`` becomes ``C(s, j)`` (restrictions chain the
    twins) or ``s (s-1) ... (s-j+1)``. The enumeration would check the next twin's
    candidates again for every first twin.

    Bare twins: the matched vertices in ``S`` are taken out after the scan, most without a
    look (the plan says they are in the lists). Twins with checks (a label, edge labels, a
    candidate set or a degree bound, the same for all of them: ``twin_group(checks=True)``)
    are scanned from the shortest of their lists and their candidate set, and each entry
    is tested by the first twin's own ``wm_check_d{f}`` (the list it came from named, so
    that list is not searched again): the same test the enumeration makes, matched
    vertices included. The first twin has no restriction (they only chain the twins).
    """
    f = int(grp.first)
    j = k - f
    s = specs[f]
    checked = (s.vlabel != -1 or s.restricted or bool(degree_bounds(s, directed))
               or any(el != -1 for _, _, el in s.bn))
    # (pos, dir) per list; checked: s.bn's own order, so a list's index is its gen code
    lists = ([(p, dr) for p, dr, _ in s.bn] if checked
             else sorted({(p, dr) for p, dr, _ in s.bn}))
    codes = list(range(len(lists)))
    out = ["__device__ __forceinline__ unsigned long long wm_warp_group(const int* r, "
           "int lane) {"]
    out += [f"  const int m{x} = r[{x}];" for x in range(f)]
    for i, (pos, dr) in enumerate(lists):
        out += _list_of(pos, dr, str(i))
    if checked and s.restricted:        # the twins' candidate set may be the shortest
        n = len(lists)
        out.append(f"  const int* a{n} = g.cand_ids;")
        out.append(f"  const long long lo{n} = g.cand_ptr[{f}], hi{n} = g.cand_ptr[{f + 1}];")
        codes.append(CAND_GEN)
    # the shortest list drives the scan (every lane makes the same choice)
    out.append(f"  int sh_ = {codes[0]};")
    out.append("  long long best_ = hi0 - lo0;")
    for i in range(1, len(codes)):
        out.append(f"  if (hi{i} - lo{i} < best_) {{ sh_ = {codes[i]}; best_ = hi{i} - lo{i}; }}")
    last = len(codes) - 1
    pick = lambda name: " : ".join(f"sh_ == {codes[i]} ? {name}{i}" for i in range(last)) + \
        f" : {name}{last}"
    out.append(f"  const int* as_ = {pick('a')};")
    out.append(f"  const long long los_ = {pick('lo')}, his_ = {pick('hi')};")
    out.append("  long long s = 0;")
    out.append("  for (long long base_ = los_; base_ < his_; base_ += 32) {")
    out.append("    const long long t_ = base_ + lane;")
    out.append("    bool in_ = t_ < his_;")
    out.append("    const int z_ = in_ ? __ldg(as_ + t_) : 0;")
    if checked:
        args = ", ".join(["z_", "sh_", "t_"] + [f"m{x}" for x in range(f)])
        out.append(f"    if (in_) in_ = wm_check_d{f}({args});")
    else:
        for i in range(len(lists)):
            out.append(f"    if (in_ && sh_ != {i}) in_ = wm_in_sorted(a{i}, lo{i}, hi{i}, z_);")
    out.append("    s += __popc(__ballot_sync(WM_FULL, in_));")
    out.append("  }")
    if not checked:
        # a matched vertex in every list is in S but may not be reused
        for x in range(f):
            if any(x == pos for pos, _ in lists):
                continue                       # no self-loops: never in its own list
            conds = [f"wm_in_sorted(a{i}, lo{i}, hi{i}, m{x})"
                     for i, (pos, dr) in enumerate(lists)
                     if not _in_list(specs, x, pos, dr, directed)]
            out.append(f"  if ({' && '.join(conds)}) --s;" if conds else "  --s;")
    out += _choices("s", j, grp.chain)
    out.append("}")
    return "\n".join(out)


#: the return of inclusion-exclusion over the sets of 2 or 3 independent vertices, from
#: ``s_[mask]`` = the size of the intersection of the sets in ``mask`` (their injective
#: choices: the sum over the set partitions of the vertices, :mod:`warpmatch.plan.leaves`)
IE_RETURN = {2: "(s_[1] * s_[2] - s_[3])",
             3: "(s_[1] * s_[2] * s_[4] - s_[3] * s_[4] - s_[5] * s_[2] - s_[6] * s_[1]"
                " + 2 * s_[7])"}


def bare_member(s: DepthSpec, directed: bool) -> bool:
    """Whether an independent vertex is a bare leaf: one backward edge and nothing to test
    but that edge (no label, edge label, candidate set or degree bound beyond it), so that
    its set is its parent's list less the matched vertices in it."""
    return (len(s.bn) == 1 and s.vlabel == -1 and s.bn[0][2] == -1 and not s.restricted
            and not degree_bounds(s, directed))


def indep_order(f: int, k: int, specs: list[DepthSpec], directed: bool) -> list[int]:
    """The order in which :func:`render_indep` takes the independent vertices at depths
    ``f..k-1``: the others first, bare leaves (:func:`bare_member`) last, so that the last
    one, if bare, needs no scan (its list's size)."""
    members = list(range(f, k))
    return ([d for d in members if not bare_member(specs[d], directed)]
            + [d for d in members if bare_member(specs[d], directed)])


def render_indep(k: int, specs: list[DepthSpec], directed: bool, grp: Any) -> str:
    """``wm_warp_group(r, lane)``: the matches of the independent vertices at depths
    ``f..k-1`` (two or three: :func:`.render.indep_leaves`) below the partial match
    ``r[0..f-1]``, the same value in every lane; the whole warp calls it, as for twins.

    The members are taken in :func:`indep_order`, member ``i`` being the ``i``-th so
    taken (inclusion-exclusion does not care which is which). Member ``i``'s set ``S_i``
    is what its own check ``wm_check_d{d}`` passes (label, degree bound, candidate set,
    every backward edge with its label, not a matched vertex): the other members' slots
    of the partial match are given as ``-1``, which no candidate equals (no edge,
    restriction or non-edge joins two members, so only the injectivity test reads those
    slots). The lanes scan member ``i``'s shortest list (or candidate set) 32 entries at
    a time and ballot its survivors (``s_[1 << i]``); the later members' checks run on
    those survivors only, so the same pass gives every overlap whose first member is
    ``i`` (``s_[3]``, ``s_[5]``, ``s_[7]`` in member 0's pass). A later member tested on
    an entry of a list it shares (same matched vertex and direction) is told so by its
    gen code for it and does not search that list again; otherwise its code is
    :data:`~.render.NO_GEN`. The last member, if a bare leaf, is its list's size less the
    matched vertices in it (most without a look: the plan says they are there). An empty
    set ends the count at 0 (the product and every overlap containing it vanish). Then
    :data:`IE_RETURN`. Enumerating would scan the next member's list again for every
    match of the previous one.
    """
    f = int(grp.first)
    j = k - f
    if j not in IE_RETURN:
        raise ValueError(f"independent vertices are counted two or three at a time, not {j}")
    order = indep_order(f, k, specs, directed)
    ms = [f"m{x}" for x in range(f)]
    out = ["__device__ __forceinline__ unsigned long long wm_warp_group(const int* r, "
           "int lane) {"]
    out += [f"  const int m{x} = r[{x}];" for x in range(f)]
    out.append("  unsigned long long s_[8] = {0, 0, 0, 0, 0, 0, 0, 0};")
    for i, d in enumerate(order):
        s = specs[d]
        pre = f"{i}_"
        out.append("  {")
        if i == j - 1 and bare_member(s, directed):
            pos, dr, _ = s.bn[0]
            less = _less_matched("n_", pre, pos, dr, f, specs, directed, "    ")
            decl = _list_of(pos, dr, pre)
            searched = any("wm_in_sorted" in x for x in less)   # else the array is unused
            out += ["  " + x for x in (decl if searched else decl[1:])]
            out.append(f"    long long n_ = hi{pre} - lo{pre};")
            out += less
            out.append(f"    s_[{1 << i}] = (unsigned long long)n_;")
            out.append("    if (n_ <= 0) return 0ull;")
            out.append("  }")
            continue
        lists = [(p, dr) for p, dr, _ in s.bn]   # index = gen code at depth d
        codes = list(range(len(lists)))
        for t, (pos, dr) in enumerate(lists):
            out += ["  " + x for x in _list_of(pos, dr, f"{pre}{t}")]
        arrs = [f"{pre}{t}" for t in range(len(lists))]
        if s.restricted:
            n = len(lists)
            out.append(f"    const int* a{pre}{n} = g.cand_ids;")
            out.append(f"    const long long lo{pre}{n} = g.cand_ptr[{d}], "
                       f"hi{pre}{n} = g.cand_ptr[{d + 1}];")
            codes.append(CAND_GEN)
            arrs.append(f"{pre}{n}")
        out.append(f"    int sh_ = {codes[0]};")
        if len(codes) > 1:
            out.append(f"    long long best_ = hi{arrs[0]} - lo{arrs[0]};")
        for c, a in zip(codes[1:], arrs[1:]):
            out.append(f"    if (hi{a} - lo{a} < best_) {{ sh_ = {c}; best_ = hi{a} - lo{a}; }}")
        pick = lambda name: " : ".join(f"sh_ == {c} ? {name}{a}"
                                       for c, a in zip(codes[:-1], arrs[:-1])) + \
            (" : " if len(codes) > 1 else "") + f"{name}{arrs[-1]}"
        out.append(f"    const int* as_ = {pick('a')};")
        out.append(f"    const long long los_ = {pick('lo')}, his_ = {pick('hi')};")
        later = list(range(i + 1, j))
        for i2 in later:
            # member i2's gen code for the list being scanned: the same list of its own
            # (same matched vertex and direction) or none
            mine = {(p, dr): t
                    for t, (p, dr, _) in reversed(list(enumerate(specs[order[i2]].bn)))}
            expr = str(NO_GEN)
            for c, (p, dr) in reversed(list(zip(codes, lists))):
                t2 = mine.get((p, dr))
                if t2 is not None:
                    expr = f"sh_ == {c} ? {t2} : {expr}"
            out.append(f"    const int g{i2}_ = {expr};")
        out.append("    for (long long base_ = los_; base_ < his_; base_ += 32) {")
        out.append("      const long long t_ = base_ + lane;")
        out.append("      const bool in_ = t_ < his_;")
        out.append("      const int z_ = in_ ? __ldg(as_ + t_) : 0;")
        args = ", ".join(["z_", "sh_", "t_"] + ms + ["-1"] * (d - f))
        out.append(f"      const bool ok_ = in_ && wm_check_d{d}({args});")
        out.append(f"      s_[{1 << i}] += __popc(__ballot_sync(WM_FULL, ok_));")
        for i2 in later:
            d2 = order[i2]
            args = ", ".join(["z_", f"g{i2}_", "t_"] + ms + ["-1"] * (d2 - f))
            out.append(f"      const bool ok{i2}_ = ok_ && wm_check_d{d2}({args});")
        # every overlap whose first member is i
        for mask in range(1 << j):
            if mask & ((1 << (i + 1)) - 1) == 1 << i and mask != 1 << i:
                conds = " && ".join(f"ok{i2}_" for i2 in later if mask & (1 << i2))
                out.append(f"      s_[{mask}] += __popc(__ballot_sync(WM_FULL, {conds}));")
        out.append("    }")
        out.append(f"    if (s_[{1 << i}] == 0) return 0ull;")
        out.append("  }")
    out.append(f"  return (unsigned long long){IE_RETURN[j]};")
    out.append("}")
    return "\n".join(out)


def _cut_limit(d: int, specs: list[DepthSpec], directed: bool, prime: int,
               cdepth: int) -> list[str]:
    """The last depth's plain leaf under rule 8: its values' range ``[lo_v, hi_v)`` (the
    restrictions) and ``t_``, below which its parent's cut neighbours are excluded (the
    edge would come before the prime) or, at ``cdepth``, the only ones allowed (before the
    smallest cut edge matched so far; none: all of them)."""
    s = specs[d]
    pos, dr, _ = s.bn[0]
    out = ["  long long lo_v = 0, hi_v = 1ll << 62;"]
    for p, sign in s.res:
        out.append(f"  lo_v = wm_max(lo_v, (long long)m{p} + 1);" if sign == 1
                   else f"  hi_v = wm_min(hi_v, (long long)m{p});")
    if cdepth < d:
        out.append("  long long t_;")
        out.append("  {")
        out.append(_prime(d, directed, prime, cdepth))
        out.append(f"    t_ = wm_cut_below(m{pos}, px_, py_, {dr});")
        out.append("  }")
        return out
    out.append("  long long k0_ = 1ll << 62, k1_ = 1ll << 62;")
    for dd in range(1, d):
        for p, r, _el in specs[dd].bn:
            kx, ky = _key(*((f"m{p}", f"m{dd}") if r == 0 else (f"m{dd}", f"m{p}")), directed)
            out.append(f"  if (WM_PART(m{p}) != WM_PART(m{dd})) {{ const long long x_ = {kx}, "
                       f"y_ = {ky}; if (x_ < k0_ || (x_ == k0_ && y_ < k1_)) "
                       "{ k0_ = x_; k1_ = y_; } }")
    out.append(f"  const long long t_ = k0_ == (1ll << 62) ? k0_ : "
               f"wm_cut_below(m{pos}, k0_, k1_, {dr});")
    return out
