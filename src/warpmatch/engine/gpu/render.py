"""Render a :class:`~warpmatch.plan.Plan` into query-specialised CUDA C++.

The GPU engine compiles its kernels at run time with NVRTC (DESIGN.md, "GPU
engine"). The kernels in ``kernels/*.cu`` are generic over the plan: they call
a handful of device functions that this module generates from the plan's
arrays, with every per-depth fact (label, degree bound, backward neighbours
and their directions and edge labels, induced non-edges, symmetry
restrictions) written as a compile-time constant. Each depth ``d`` gets

``wm_check_d{d}(c, gen, gpos, m0, ..., m{d-1})``
    the fine-grained task of gMatch section 4.1: may data vertex ``c`` extend
    the partial match ``m0..m{d-1}`` at depth ``d``? (Plan rules 1-7.) ``gen``
    names the list ``c`` was drawn from and ``gpos`` its position there, so the
    generating backward edge needs no binary search, only its label check;
``wm_gen_d{d}(m0, ..., m{d-1}, gen, start, len)``
    the local candidate set of gMatch section 4.1: the shortest of the
    backward neighbours' adjacency lists (or the depth's explicit candidate
    set, if that is shorter);
``wm_elem_d{d}`` / ``wm_gen_start_d{d}``
    element access into that list and its start, so a warp's stack stores only
    the list's code (one byte) and length, never the list itself.

The partial match is passed as scalars: the kernels rebuild it from parent
indices (gMatch section 4.2) in fully unrolled generated code, so it lives in
registers and is never indexed at run time. Dispatchers ``wm_stack_task``
(rebuild from a warp's shared-memory stack), ``wm_row_task`` and
``wm_row_gen`` (from a materialised row, for the BFS phase and the coarse
model) switch on the run-time depth.

The rendered text depends only on the plan's structure, not on the data graph
or the candidate arrays (read from device memory), so it is the cache key.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...plan.plan import Plan

#: gen code of a depth's explicit candidate set (backward neighbours use 0..nb-1)
CAND_GEN = 254


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


def depth_specs(plan: Plan) -> list[DepthSpec]:
    """Per-depth constants of ``plan`` (see the Plan docstring, rules 1-7)."""
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


def _check(d: int, s: DepthSpec, directed: bool) -> str:
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
    if directed:
        if s.min_out > 0:
            out.append(f"  if (g.indptr[c + 1] - g.indptr[c] < {s.min_out}) return false;")
        if s.min_in > 0:
            out.append(f"  if (g.in_indptr[c + 1] - g.in_indptr[c] < {s.min_in}) return false;")
    else:
        lo = max(s.min_out, s.min_in)
        if lo > 0:
            out.append(f"  if (g.indptr[c + 1] - g.indptr[c] < {lo}) return false;")
    if d > 0 and s.restricted:
        out.append(f"  if (gen != {CAND_GEN} && !wm_in_sorted(g.cand_ids, g.cand_ptr[{d}], "
                   f"g.cand_ptr[{d + 1}], c)) return false;")
    for t, (pos, dr, el) in enumerate(s.bn):
        src, dst = (f"m{pos}", "c") if dr == 0 else ("c", f"m{pos}")
        lab_arr = "g.elab" if dr == 0 else "g.in_elab"
        if el != -1:
            out.append(f"  if (gen == {t}) {{ if ({lab_arr}[gpos] != {el}) return false; }}")
            out.append(f"  else if (!wm_edge({src}, {dst}, {el})) return false;")
        else:
            out.append(f"  if (gen != {t} && !wm_edge({src}, {dst}, -1)) return false;")
    for pos, dr in s.na:
        src, dst = (f"m{pos}", "c") if dr == 0 else ("c", f"m{pos}")
        out.append(f"  if (wm_edge({src}, {dst}, -1)) return false;")
    out.append("  return true;")
    out.append("}")
    return "\n".join(out)


def _gen(d: int, s: DepthSpec) -> str:
    """The local candidate set: the shortest backward list (gMatch section 4.1)."""
    out = [f"__device__ __forceinline__ void wm_gen_d{d}({_ms_params(d)}, int& gen, "
           "long long& start, int& len) {",
           "  long long s, e;"]
    for t, (pos, dr, _el) in enumerate(s.bn):
        ip = "g.indptr" if dr == 0 else "g.in_indptr"
        out.append(f"  s = {ip}[m{pos}]; e = {ip}[m{pos} + 1];")
        if t == 0:
            out.append("  gen = 0; start = s; len = (int)(e - s);")
        else:
            out.append(f"  if (e - s < len) {{ gen = {t}; start = s; len = (int)(e - s); }}")
    if s.restricted:
        out.append(f"  s = g.cand_ptr[{d}]; e = g.cand_ptr[{d + 1}];")
        out.append(f"  if (e - s < len) {{ gen = {CAND_GEN}; start = s; len = (int)(e - s); }}")
    out.append("}")
    # start of a list, from its code (the stack stores code + length only)
    out.append(f"__device__ __forceinline__ long long wm_gen_start_d{d}(int gen, "
               f"{_ms_params(d)}) {{")
    out.append("  switch (gen) {")
    for t, (pos, dr, _el) in enumerate(s.bn):
        ip = "g.indptr" if dr == 0 else "g.in_indptr"
        out.append(f"  case {t}: return {ip}[m{pos}];")
    if s.restricted:
        out.append(f"  case {CAND_GEN}: return g.cand_ptr[{d}];")
    out.append("  }")
    out.append("  return 0;")
    out.append("}")
    out.append(f"__device__ __forceinline__ int wm_elem_d{d}(int gen, long long pos) {{")
    dirs = {dr for _, dr, _ in s.bn}
    if s.restricted:
        out.append(f"  if (gen == {CAND_GEN}) return g.cand_ids[pos];")
    if dirs == {0}:
        out.append("  return g.indices[pos];")
    elif dirs == {1}:
        out.append("  return g.in_indices[pos];")
    else:
        ins = [t for t, (_, dr, _) in enumerate(s.bn) if dr == 1]
        cond = " || ".join(f"gen == {t}" for t in ins)
        out.append(f"  return ({cond}) ? g.in_indices[pos] : g.indices[pos];")
    out.append("}")
    return "\n".join(out)


def _stack_task(k: int) -> str:
    """Rebuild the partial match from a warp's stack and run one task (gMatch 4.2)."""
    out = ["__device__ __forceinline__ bool wm_stack_task(int d, const WmStack& S, int e, "
           "int off, int& c, int& ngen, int& nlen, int* row) {",
           "  (void)ngen; (void)nlen; (void)row;",
           "  switch (d) {"]
    for d in range(1, k):
        out.append(f"  case {d}: {{")
        out.append("    int i_ = e;")
        for j in range(d - 1, -1, -1):
            out.append(f"    const int m{j} = S.v[{j}][i_];" + (f" i_ = S.p[{j}][i_];" if j else ""))
        out.append(f"    const int gen = S.gen[{d - 1}][e];")
        out.append(f"    const long long gp = wm_gen_start_d{d}(gen, {_ms(d)}) + off;")
        out.append(f"    c = wm_elem_d{d}(gen, gp);")
        out.append(f"    if (!wm_check_d{d}(c, gen, gp, {_ms(d)})) return false;")
        if d < k - 1:
            out.append("    long long ns_;")
            out.append(f"    wm_gen_d{d + 1}({_ms(d)}, c, ngen, ns_, nlen);")
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
           "long long& start, int& len) {",
           "  gen = 0; start = 0; len = 0;",
           "  switch (d) {"]
    for d in range(1, k):
        args = ", ".join(f"row[{j}]" for j in range(d))
        out.append(f"  case {d}: wm_gen_d{d}({args}, gen, start, len); return;")
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


def render_plan(plan: Plan) -> str:
    """CUDA C++ declarations specialised to ``plan`` (prepended to the kernels).

    Parameters
    ----------
    plan : Plan
        A plan with ``k >= 1``.

    Returns
    -------
    str
        Source text defining ``WM_K``, ``WM_DIRECTED`` and the functions
        listed in the module docstring. Identical plans structures give
        identical text, so the text is the compilation cache key.
    """
    k = int(plan.k)
    parts = [f"#define WM_K {k}",
             f"#define WM_DIRECTED {1 if plan.directed else 0}",
             f"#define WM_CAND_GEN {CAND_GEN}"]
    return "\n".join(parts) + "\n"


def render_functions(plan: Plan) -> str:
    """The generated device functions (after ``common.cuh`` in the source)."""
    k = int(plan.k)
    specs = depth_specs(plan)
    body = []
    for d in range(k):
        body.append(_check(d, specs[d], bool(plan.directed)))
    for d in range(1, k):
        body.append(_gen(d, specs[d]))
    body.append(_stack_task(k))
    body.append(_row_dispatch(k))
    return "\n".join(body) + "\n"


def plan_signature(plan: Plan) -> str:
    """A short text that identifies the rendered source of ``plan``."""
    import hashlib
    text = render_plan(plan) + render_functions(plan)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


__all__ = ["CAND_GEN", "DepthSpec", "depth_specs", "render_plan", "render_functions",
           "plan_signature"]
