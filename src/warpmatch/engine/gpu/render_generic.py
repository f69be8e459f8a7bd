"""The GPU engine's generic module: one compiled source per query size, the plan in a table.

Map: :func:`generic_eligible` (which plans it serves) < :func:`generic_table` (a plan's
per-depth facts as an int32 table, copied into the module's constant ``wm_gp`` before a
launch) < :func:`render_plan_generic` / :func:`render_functions_generic` (the source:
the functions the kernels call, with :mod:`.render`'s names and signatures, as loops
over a depth's record in ``wm_gp`` instead of code written out per depth).

Issue "large labeled queries" asks for a first answer within half a second on a warm
process whatever the query. A specialised module (:mod:`.render`) takes NVRTC seconds
for every new plan structure (1.8-16.8 s for 12- to 32-vertex labeled queries on one
core); this module's text depends only on ``k``, directedness and whether count mode
counts some last depths from list sizes (a last leaf or a group of leaves: which is in
the table), so it is compiled once per such triple and read from
CuPy's on-disk cache ever after, whatever the labels, edges, restrictions and
candidate sets of the plan. The kernels (``bfs.cu``, ``fine.cu``, ``coarse.cu``) are the
same; only the generated functions change. What it costs is speed in the search: a
depth's facts are constant-memory loads and loops instead of immediates and unrolled
tests, and the partial match is indexed at run time (a local array). A first version
that rendered the same per-depth functions as :mod:`.render`, reading ``wm_gp``, took
NVRTC longer than the specialised module (yeast's 16- and 32-vertex queries on the H200
host: median 7-8 s, the slowest 45-51 s): its text still grew with ``k``. Loops over the
depth keep it one size (0.85-1.3 s to compile at 16 and at 32 vertices).

How it differs from the specialised functions (gMatch section 4.1's checks are the same):

- Every matched vertex is tested for injectivity, not only those the plan's
  adjacency and restrictions leave open (the extra tests cannot reject a valid
  candidate).
- The stack always keeps each entry's restriction offset (``WM_TRIM`` 1): 4 more
  bytes per entry, so up to one warp fewer per block for small ``k``.
- Inter-partition plans (rule 8, PBE's DupRemove) are not served: they take the
  specialised module.
- Twins (:func:`.render.twin_leaves`) are counted by ``wm_warp_group`` as in the
  specialised module, but always as twins with checks are (each entry of the shortest
  list tested by ``wm_check`` at the first twin's depth, matched vertices included), and
  the module is compiled apart for plans with twins or independent vertices
  (``WM_WARP_GROUP``, part of :func:`generic_signature`). Independent vertices
  (:func:`.render.indep_leaves`) likewise, by ``wm_indep_warp``, with the partial
  match copied into a local array to give the later members' slots ``-1``.
- A group of bare leaves (:func:`.render.leaf_first`) is described by a record after the
  depths' records (:func:`_group_record`: its first depth, kind, parents and which matched
  vertices their lists hold), read at run time, so the first counted depth ``WM_LEAF_D``
  is a constant-memory load, not a compile-time constant.
"""
from __future__ import annotations

import numpy as np

from ...plan.plan import Plan
from .render import (CAND_GEN, DEFAULT_GROUPS, NO_GEN, _in_list, degree_bounds,
                     depth_specs, indep_wanted, leaf_countable, leaf_first, memo,
                     table_leaves, table_wanted, uses_table, warp_group)
from .render_leaves import table_codes

__all__ = ["GENERIC_KMAX", "generic_eligible", "generic_table", "render_plan_generic",
           "render_functions_generic", "generic_signature"]

#: largest query the generic module serves: its table, ``k * (H + 13 k)`` int32 and the
#: group record's ``12 + 3 k``, must fit the 64 KB of constant memory with the graph's
#: pointers (32 vertices: 54,576 bytes)
GENERIC_KMAX = 32
#: a depth's header: vertex label, out- and in-degree bounds to test (0: implied, none),
#: candidate set present, then the counts of backward edges, non-edges, restrictions
H_VLAB, H_DOUT, H_DIN, H_RESTR, H_NBN, H_NNA, H_NRES = range(7)
H = 7


def _stride(k: int) -> int:
    """Ints per depth: the header, ``2k`` backward edges (pos, dir, label: a directed
    query may join two vertices both ways), ``2k`` non-edges (pos, dir), ``k``
    restrictions (pos, sign) and ``k`` leaf codes."""
    return H + 13 * k


def _bn(k: int, t: int) -> int:
    return H + 3 * t


def _na(k: int, t: int) -> int:
    return H + 6 * k + 2 * t


def _res(k: int, t: int) -> int:
    return H + 10 * k + 2 * t


def _leafc(k: int, j: int) -> int:
    return H + 12 * k + j


#: the group record after the depths' records: first counted depth, kind (0: a last leaf
#: or nothing, 1: alike leaves of one vertex, 2: leaves of different vertices, 3: twins,
#: whose lists and checks are the first twin's depth record, 4: independent vertices,
#: each one's in its own depth record), chain
#: (C(s, j)), j, table (1: kind 0 or 1 counted from ``g.leaf_tab``, the leaves' tests
#: read from depth ``first``'s record: :func:`.render.table_leaves`), then (parent depth,
#: direction) of up to 3 leaves, then per matched depth x < first and leaf i the code at
#: ``G_CODES + 3 x + i`` (0 never in its list, 1 always, 2 look it up; with the table: 2
#: look it up and test it)
G_FIRST, G_KIND, G_CHAIN, G_J, G_TAB, G_LEAVES = range(6)
G_CODES = G_LEAVES + 6


def _group_n(k: int) -> int:
    """Ints of the group record for queries of ``k`` vertices."""
    return G_CODES + 3 * k


def generic_eligible(plan: Plan) -> bool:
    """Whether the generic module can run ``plan``: 2..:data:`GENERIC_KMAX` vertices, no
    inter-partition rule, and every depth's lists within the table's room."""
    return memo(plan, "generic_eligible", lambda: _generic_eligible(plan))


def _generic_eligible(plan: Plan) -> bool:
    k = int(plan.k)
    if not 2 <= k <= GENERIC_KMAX or plan.cut_part is not None:
        return False
    return all(len(s.bn) <= 2 * k and len(s.na) <= 2 * k and len(s.res) <= k
               for s in depth_specs(plan))


def generic_table(plan: Plan, groups: str = DEFAULT_GROUPS) -> np.ndarray:
    """``plan``'s per-depth facts in the layout :func:`render_functions_generic` reads.

    Parameters
    ----------
    plan : Plan
        A plan :func:`generic_eligible` accepts.
    groups : str, optional
        Which groups of bare leaves the group record describes (:func:`.render.leaf_first`).

    Returns
    -------
    numpy.ndarray
        int32 ``[k * stride + group record]``, depth ``d`` at ``d * stride``, the group
        record (:func:`_group_record`) after the last depth; read-only, computed once
        per plan structure (:func:`.render.memo`).
    """
    return memo(plan, f"generic_table-{groups}-{int(table_wanted())}-{int(indep_wanted())}",
                lambda: _generic_table(plan, groups))


def _group_record(plan: Plan, groups: str) -> np.ndarray:
    """The group record (``G_*``): where count mode starts counting and how."""
    from ...plan.leaves import bare_group
    k = int(plan.k)
    specs = depth_specs(plan)
    rec = np.zeros(_group_n(k), dtype=np.int32)
    first = leaf_first(plan, groups)
    rec[G_FIRST] = first
    warp = warp_group(plan, groups)
    if warp is not None:
        rec[G_KIND] = 4 if warp.mixed else 3
        rec[G_CHAIN], rec[G_J] = int(warp.chain), k - first
        return rec
    if uses_table(plan, groups):
        rec[G_TAB] = 1
        tab = table_leaves(plan, groups)
        if first < k - 1:                   # alike leaves: codes as the last leaf's
            rec[G_KIND], rec[G_CHAIN], rec[G_J] = 1, int(tab.chain), k - first
            rec[G_LEAVES:G_LEAVES + 2] = (tab.parent, tab.direction)
            for x, code in enumerate(table_codes(specs, tab)):
                rec[G_CODES + 3 * x] = code
        return rec
    if first >= k - 1:
        return rec                          # a last leaf (its codes are per depth) or none
    grp = bare_group(plan, mixed=groups == "all")
    rec[G_KIND] = 2 if grp.mixed else 1
    rec[G_CHAIN] = int(grp.chain)
    rec[G_J] = k - first
    leaves = ([specs[d].bn[0][:2] for d in range(first, k)] if grp.mixed
              else [(int(grp.parent), int(grp.direction))])
    for i, (pos, dr) in enumerate(leaves):
        rec[G_LEAVES + 2 * i:G_LEAVES + 2 * i + 2] = (pos, dr)
        for x in range(first):
            if x != pos:
                rec[G_CODES + 3 * x + i] = (
                    1 if _in_list(specs, x, pos, dr, bool(plan.directed)) else 2)
    return rec


def _generic_table(plan: Plan, groups: str) -> np.ndarray:
    k = int(plan.k)
    specs = depth_specs(plan)
    directed = bool(plan.directed)
    st = _stride(k)
    tab = np.zeros(k * st + _group_n(k), dtype=np.int32)
    tab[k * st:] = _group_record(plan, groups)
    for d, s in enumerate(specs):
        row = tab[d * st:(d + 1) * st]
        row[H_VLAB] = s.vlabel
        # degree bounds the backward edges do not already imply (as render._check)
        for ip, lo in degree_bounds(s, directed):
            row[H_DOUT if ip == "g.indptr" else H_DIN] = lo
        row[H_RESTR] = int(d > 0 and s.restricted)
        row[H_NBN], row[H_NNA], row[H_NRES] = len(s.bn), len(s.na), len(s.res)
        for t, (pos, dr, el) in enumerate(s.bn):
            row[_bn(k, t):_bn(k, t) + 3] = (pos, dr, el)
        for t, (pos, dr) in enumerate(s.na):
            row[_na(k, t):_na(k, t) + 2] = (pos, dr)
        for t, (pos, sign) in enumerate(s.res):
            row[_res(k, t):_res(k, t) + 2] = (pos, sign)
    leaves = table_leaves(plan, groups)
    if uses_table(plan, groups) and leaves.first == k - 1:
        # the last leaf from the table: the matched vertices to look up and test
        for j, code in enumerate(table_codes(specs, leaves)):
            tab[(k - 1) * st + _leafc(k, j)] = code
    elif leaf_countable(plan):
        # the last depth's matched vertices that its list may hold (render._leaf):
        # 0 never (its parent, or restricted against it), 1 in the list exactly when
        # the restrictions hold, 2 look it up
        d = k - 1
        s = specs[d]
        pos, dr, _ = s.bn[0]
        implied = {pos} | {p for p, _ in s.res}
        for j in range(d):
            if j not in implied:
                code = 1 if _in_list(specs, j, pos, dr, directed) else 2
                tab[d * st + _leafc(k, j)] = code
    tab.setflags(write=False)
    return tab


_GENERIC_BODY = r"""
__constant__ int wm_gp[WM_K * WM_GP_STRIDE + WM_G_N];
#define WM_GPV(d, f) wm_gp[(d) * WM_GP_STRIDE + (f)]
#define WM_GRP(f) wm_gp[WM_K * WM_GP_STRIDE + (f)]

// may data vertex c extend m_[0..d-1] at depth d? (render._check's tests, read from wm_gp)
__device__ bool wm_check(int d, int c, int gen, long long gpos, const int* m_) {
  const int vl_ = WM_GPV(d, WM_H_VLAB);
  if (vl_ != -1 && g.vlab[c] != vl_) return false;
  const int nr_ = WM_GPV(d, WM_H_NRES);
  for (int t = 0; t < nr_; ++t) {
    const int p_ = WM_GPV(d, WM_O_RES + 2 * t);
    if (WM_GPV(d, WM_O_RES + 2 * t + 1) == 1 ? !(c > m_[p_]) : !(c < m_[p_])) return false;
  }
  for (int j = 0; j < d; ++j)
    if (c == m_[j]) return false;
  const int do_ = WM_GPV(d, WM_H_DOUT);
  if (do_ && g.indptr[c + 1] - g.indptr[c] < do_) return false;
#if WM_DIRECTED
  const int di_ = WM_GPV(d, WM_H_DIN);
  if (di_ && g.in_indptr[c + 1] - g.in_indptr[c] < di_) return false;
#endif
  if (WM_GPV(d, WM_H_RESTR) && gen != WM_CAND_GEN &&
      !wm_in_sorted(g.cand_ids, g.cand_ptr[d], g.cand_ptr[d + 1], c)) return false;
  const int nb_ = WM_GPV(d, WM_H_NBN);
  for (int t = 0; t < nb_; ++t) {
    const int p_ = WM_GPV(d, WM_O_BN + 3 * t);
    const int r_ = WM_GPV(d, WM_O_BN + 3 * t + 1);
    const int e_ = WM_GPV(d, WM_O_BN + 3 * t + 2);
    if (gen == t) {
      if (e_ != -1 && (r_ == 0 ? g.elab : g.in_elab)[gpos] != e_) return false;
    } else if (!wm_bedge(m_[p_], c, r_, e_)) return false;
  }
  const int nn_ = WM_GPV(d, WM_H_NNA);
  for (int t = 0; t < nn_; ++t) {
    if (wm_bedge(m_[WM_GPV(d, WM_O_NA + 2 * t)], c, WM_GPV(d, WM_O_NA + 2 * t + 1), -1))
      return false;
  }
  return true;
}

__device__ __forceinline__ const int* wm_arr(int d, int gen) {
  if (gen == WM_CAND_GEN) return g.cand_ids;
  return WM_GPV(d, WM_O_BN + 3 * gen + 1) == 0 ? g.indices : g.in_indices;
}

// depth d's candidate list from m_[0..d-1] (render._gen: the shortest backward list or
// the candidate set, cut to the restriction range)
__device__ void wm_gen(int d, const int* m_, int& gen, long long& start, int& len, int& skip) {
  long long s, e;
  gen = 0; start = 0; len = 0; skip = 0;
  const int nb_ = WM_GPV(d, WM_H_NBN);
  for (int t = 0; t < nb_; ++t) {
    const int p_ = WM_GPV(d, WM_O_BN + 3 * t);
    const long long* ip_ = WM_GPV(d, WM_O_BN + 3 * t + 1) == 0 ? g.indptr : g.in_indptr;
    s = ip_[m_[p_]]; e = ip_[m_[p_] + 1];
    if (t == 0 || e - s < len) { gen = t; start = s; len = (int)(e - s); }
  }
  if (WM_GPV(d, WM_H_RESTR)) {
    s = g.cand_ptr[d]; e = g.cand_ptr[d + 1];
    if (e - s < len) { gen = WM_CAND_GEN; start = s; len = (int)(e - s); }
  }
  const int nr_ = WM_GPV(d, WM_H_NRES);
  if (nr_ > 0) {
    bool ha_ = false, hb_ = false;
    int b_ = 0, u_ = 0;
    for (int t = 0; t < nr_; ++t) {
      const int p_ = WM_GPV(d, WM_O_RES + 2 * t);
      if (WM_GPV(d, WM_O_RES + 2 * t + 1) == 1) {
        b_ = ha_ ? wm_max(b_, m_[p_]) : m_[p_]; ha_ = true;
      } else {
        u_ = hb_ ? wm_min(u_, m_[p_]) : m_[p_]; hb_ = true;
      }
    }
    const int* a_ = wm_arr(d, gen);
    long long lo_ = start, hi_ = start + len;
    if (ha_) lo_ = wm_lower_bound(a_, lo_, hi_, b_ + 1);
    if (hb_) hi_ = wm_max(lo_, wm_lower_bound(a_, lo_, hi_, u_));
    skip = (int)(lo_ - start); start = lo_; len = (int)(hi_ - lo_);
  }
}

__device__ __forceinline__ long long wm_gen_start(int d, int gen, const int* m_) {
  if (gen == WM_CAND_GEN) return g.cand_ptr[d];
  const int p_ = WM_GPV(d, WM_O_BN + 3 * gen);
  return (WM_GPV(d, WM_O_BN + 3 * gen + 1) == 0 ? g.indptr : g.in_indptr)[m_[p_]];
}

#if WM_LEAF_TAB
// leaves counted from a table (render_leaves.render_table; their tests are depth
// WM_LEAF_D's record): may entry z, at position p of a list of the leaves' parent, be one?
__device__ bool wm_tab_ok(int z, long long p) {
  const int f = WM_GRP(WM_G_FIRST);
  const int e_ = WM_GPV(f, WM_O_BN + 2);
  if (e_ != -1 && (WM_GPV(f, WM_O_BN + 1) == 0 ? g.elab : g.in_elab)[p] != e_) return false;
  const int vl_ = WM_GPV(f, WM_H_VLAB);
  if (vl_ != -1 && g.vlab[z] != vl_) return false;
  const int do_ = WM_GPV(f, WM_H_DOUT);
  if (do_ && g.indptr[z + 1] - g.indptr[z] < do_) return false;
#if WM_DIRECTED
  const int di_ = WM_GPV(f, WM_H_DIN);
  if (di_ && g.in_indptr[z + 1] - g.in_indptr[z] < di_) return false;
#endif
  return !WM_GPV(f, WM_H_RESTR) ||
         wm_in_sorted(g.cand_ids, g.cand_ptr[f], g.cand_ptr[f + 1], z);
}

// how many entries of v's list pass wm_tab_ok, the whole warp scanning it
__device__ int wm_tab_row(int v, int lane) {
  const bool in_ = WM_GPV(WM_GRP(WM_G_FIRST), WM_O_BN + 1) == 1;
  const long long* ip_ = in_ ? g.in_indptr : g.indptr;
  const int* ix_ = in_ ? g.in_indices : g.indices;
  const long long lo = ip_[v], hi = ip_[v + 1];
  int n = 0;
  for (long long b = lo; b < hi; b += 32) {
    const long long p = b + lane;
    const bool ok = p < hi && wm_tab_ok(__ldg(ix_ + p), p);
    n += __popc(__ballot_sync(WM_FULL, ok));
  }
  return n;
}

// is z in v's list, passing wm_tab_ok?
__device__ bool wm_tab_has(int v, int z) {
  const bool in_ = WM_GPV(WM_GRP(WM_G_FIRST), WM_O_BN + 1) == 1;
  const long long* ip_ = in_ ? g.in_indptr : g.indptr;
  const int* ix_ = in_ ? g.in_indices : g.indices;
  const long long hi = ip_[v + 1];
  const long long p = wm_lower_bound(ix_, ip_[v], hi, z);
  return p < hi && __ldg(ix_ + p) == z && wm_tab_ok(z, p);
}
#endif

#if WM_LEAF_OK
__device__ unsigned long long wm_leaf_group(const int* m_);

// the matches of depths WM_LEAF_D..k-1: a last leaf from its list (render._leaf; codes
// from generic_table) or from the table, or a group of leaves (wm_leaf_group)
__device__ unsigned long long wm_leaf(const int* m_) {
  if (WM_GRP(WM_G_KIND)) return wm_leaf_group(m_);
  const int d = WM_K - 1;
#if WM_LEAF_TAB
  {
    const int v_ = m_[WM_GPV(d, WM_O_BN)];
    long long n = g.leaf_tab[v_];
    for (int j = 0; j < d; ++j)
      if (WM_GPV(d, WM_O_LEAF + j) == 2 && wm_tab_has(v_, m_[j])) --n;
    return (unsigned long long)n;
  }
#endif
  int gen, len, skip;
  long long start;
  wm_gen(d, m_, gen, start, len, skip);
  const int* a_ = wm_arr(d, gen);
  int n = len;
  const int nr_ = WM_GPV(d, WM_H_NRES);
  for (int j = 0; j < d; ++j) {
    const int code = WM_GPV(d, WM_O_LEAF + j);
    if (code == 1) {
      bool ok_ = true;
      for (int t = 0; t < nr_; ++t) {
        const int p_ = WM_GPV(d, WM_O_RES + 2 * t);
        ok_ = ok_ && (WM_GPV(d, WM_O_RES + 2 * t + 1) == 1 ? m_[j] > m_[p_] : m_[j] < m_[p_]);
      }
      if (ok_) --n;
    } else if (code == 2 && wm_in_sorted(a_, start, start + len, m_[j])) {
      --n;
    }
  }
  return (unsigned long long)n;
}
__device__ __forceinline__ unsigned long long wm_row_leaf(const int* row) {
  return wm_leaf(row);
}

// a group of bare leaves at depths f..k-1 (render._group, from the group record)
__device__ unsigned long long wm_leaf_group(const int* m_) {
  const int f = WM_GRP(WM_G_FIRST), j = WM_GRP(WM_G_J);
  const int* a_[3];
  long long lo_[3], hi_[3];
  for (int i = 0; i < (WM_GRP(WM_G_KIND) == 1 ? 1 : j); ++i) {
    const int p_ = m_[WM_GRP(WM_G_LEAVES + 2 * i)];
    const bool in_ = WM_GRP(WM_G_LEAVES + 2 * i + 1) == 1;
    a_[i] = in_ ? g.in_indices : g.indices;
    lo_[i] = (in_ ? g.in_indptr : g.indptr)[p_];
    hi_[i] = (in_ ? g.in_indptr : g.indptr)[p_ + 1];
  }
  if (WM_GRP(WM_G_KIND) == 1) {        // alike leaves of one vertex
#if WM_LEAF_TAB
    const int v_ = m_[WM_GRP(WM_G_LEAVES)];
    long long s = g.leaf_tab[v_];           // their tests passed (render_table)
    for (int x = 0; x < f; ++x)
      if (WM_GRP(WM_G_CODES + 3 * x) == 2 && wm_tab_has(v_, m_[x])) --s;
#else
    long long s = hi_[0] - lo_[0];
    for (int x = 0; x < f; ++x) {
      const int code = WM_GRP(WM_G_CODES + 3 * x);
      if (code == 1 || (code == 2 && wm_in_sorted(a_[0], lo_[0], hi_[0], m_[x]))) --s;
    }
#endif
    if (s < j) return 0ull;
    return WM_GRP(WM_G_CHAIN) ? wm_choose((unsigned long long)s, j)
                              : wm_falling((unsigned long long)s, j);
  }
  long long s_[8];
  for (int i = 0; i < j; ++i) {
    s_[1 << i] = hi_[i] - lo_[i];
    if (s_[1 << i] == 0) return 0ull;
  }
  // leaves with the same list (parent and direction) have the same set
#define WM_SAME(a, b) (WM_GRP(WM_G_LEAVES + 2 * (a)) == WM_GRP(WM_G_LEAVES + 2 * (b)) && \
                       WM_GRP(WM_G_LEAVES + 2 * (a) + 1) == WM_GRP(WM_G_LEAVES + 2 * (b) + 1))
#define WM_C2(a, b) (WM_SAME(a, b) ? s_[1 << (a)] : \
                     wm_common2(a_[a], lo_[a], hi_[a], a_[b], lo_[b], hi_[b]))
  s_[3] = WM_C2(0, 1);
  if (j == 3) {
    s_[5] = WM_C2(0, 2);
    s_[6] = WM_C2(1, 2);
    s_[7] = 0;
    if (s_[3] && s_[5] && s_[6]) {
      if (WM_SAME(0, 1)) s_[7] = s_[5];
      else if (WM_SAME(0, 2) || WM_SAME(1, 2)) s_[7] = s_[3];
      else s_[7] = wm_common3(a_[0], lo_[0], hi_[0], a_[1], lo_[1], hi_[1],
                              a_[2], lo_[2], hi_[2]);
    }
  }
#undef WM_C2
#undef WM_SAME
  for (int x = 0; x < f; ++x) {
    int in_ = 0;
    for (int i = 0; i < j; ++i) {
      const int code = WM_GRP(WM_G_CODES + 3 * x + i);
      if (code == 1 || (code == 2 && wm_in_sorted(a_[i], lo_[i], hi_[i], m_[x])))
        in_ |= 1 << i;
    }
    if (in_) wm_unmatch(s_, in_, j);
  }
  if (j == 2) return (unsigned long long)(s_[1] * s_[2] - s_[3]);
  return (unsigned long long)(s_[1] * s_[2] * s_[4] - s_[3] * s_[4] - s_[5] * s_[2]
                              - s_[6] * s_[1] + 2 * s_[7]);
}
#endif

#if WM_WARP_GROUP
// twins at depths f..k-1 below the partial match r[0..f-1] (render_leaves.render_twins,
// whose checked form this is): the whole warp scans the shortest of the first twin's
// lists (or its candidate set) and tests each entry by wm_check at depth f, naming the
// list it came from; the twins' restrictions only chain them, so f has none
__device__ unsigned long long wm_twin_warp(const int* r, int lane) {
  const int f = WM_GRP(WM_G_FIRST), j = WM_GRP(WM_G_J);
  int sh_ = 0;
  const int* as_ = g.indices;
  long long los_ = 0, his_ = 0;
  const int nb_ = WM_GPV(f, WM_H_NBN);
  for (int t = 0; t < nb_; ++t) {
    const int m = r[WM_GPV(f, WM_O_BN + 3 * t)];
    const bool in_ = WM_GPV(f, WM_O_BN + 3 * t + 1) == 1;
    const long long* ip_ = in_ ? g.in_indptr : g.indptr;
    const long long lo = ip_[m], hi = ip_[m + 1];
    if (t == 0 || hi - lo < his_ - los_) {
      sh_ = t; as_ = in_ ? g.in_indices : g.indices; los_ = lo; his_ = hi;
    }
  }
  if (WM_GPV(f, WM_H_RESTR) && g.cand_ptr[f + 1] - g.cand_ptr[f] < his_ - los_) {
    sh_ = WM_CAND_GEN; as_ = g.cand_ids; los_ = g.cand_ptr[f]; his_ = g.cand_ptr[f + 1];
  }
  long long s = 0;
  for (long long base_ = los_; base_ < his_; base_ += 32) {
    const long long t_ = base_ + lane;
    bool in_ = t_ < his_;
    const int z_ = in_ ? __ldg(as_ + t_) : 0;
    if (in_) in_ = wm_check(f, z_, sh_, t_, r);
    s += __popc(__ballot_sync(WM_FULL, in_));
  }
  if (s < j) return 0ull;
  return WM_GRP(WM_G_CHAIN) ? wm_choose((unsigned long long)s, j)
                            : wm_falling((unsigned long long)s, j);
}

// independent vertices at depths f..k-1 below the partial match r[0..f-1]
// (render_leaves.render_indep, whose loop form this is): taken in
// render_leaves.indep_order (bare leaves last); member i's set is what wm_check at its
// depth passes, the other members' slots -1; the warp scans member i's shortest list (or
// candidate set), ballots its survivors and tests the later members on them, which gives
// every overlap whose first member is i; the last member, if bare, is its list's size
// less the matched vertices in it; then inclusion-exclusion
__device__ __forceinline__ bool wm_bare(int d) {
  return WM_GPV(d, WM_H_NBN) == 1 && WM_GPV(d, WM_H_VLAB) == -1 &&
         WM_GPV(d, WM_O_BN + 2) == -1 && !WM_GPV(d, WM_H_RESTR) &&
         !WM_GPV(d, WM_H_DOUT) && !WM_GPV(d, WM_H_DIN);
}

__device__ unsigned long long wm_indep_warp(const int* r, int lane) {
  const int f = WM_GRP(WM_G_FIRST), j = WM_GRP(WM_G_J);
  int m_[WM_K];
  for (int x = 0; x < WM_K; ++x) m_[x] = x < f ? r[x] : -1;
  int ord_[3], no_ = 0;
  for (int bare = 0; bare < 2; ++bare)
    for (int i = 0; i < j; ++i)
      if ((int)wm_bare(f + i) == bare) ord_[no_++] = f + i;
  unsigned long long s_[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < j; ++i) {
    const int d = ord_[i];
    if (i == j - 1 && wm_bare(d)) {
      const int p_ = WM_GPV(d, WM_O_BN);
      const bool in_ = WM_GPV(d, WM_O_BN + 1) == 1;
      const long long lo = (in_ ? g.in_indptr : g.indptr)[m_[p_]];
      const long long hi = (in_ ? g.in_indptr : g.indptr)[m_[p_] + 1];
      const int* a_ = in_ ? g.in_indices : g.indices;
      long long n_ = hi - lo;
      for (int x = 0; x < f; ++x)
        if (x != p_ && wm_in_sorted(a_, lo, hi, m_[x])) --n_;
      if (n_ <= 0) return 0ull;
      s_[1 << i] = (unsigned long long)n_;
      continue;
    }
    int sh_ = 0, shp_ = -1, shr_ = 0;    // the scanned list: gen code, matched depth, dir
    const int* as_ = g.indices;
    long long los_ = 0, his_ = 0;
    const int nb_ = WM_GPV(d, WM_H_NBN);
    for (int t = 0; t < nb_; ++t) {
      const int p_ = WM_GPV(d, WM_O_BN + 3 * t);
      const int r_ = WM_GPV(d, WM_O_BN + 3 * t + 1);
      const long long* ip_ = r_ == 1 ? g.in_indptr : g.indptr;
      const long long lo = ip_[m_[p_]], hi = ip_[m_[p_] + 1];
      if (t == 0 || hi - lo < his_ - los_) {
        sh_ = t; shp_ = p_; shr_ = r_;
        as_ = r_ == 1 ? g.in_indices : g.indices; los_ = lo; his_ = hi;
      }
    }
    if (WM_GPV(d, WM_H_RESTR) && g.cand_ptr[d + 1] - g.cand_ptr[d] < his_ - los_) {
      sh_ = WM_CAND_GEN; shp_ = -1;
      as_ = g.cand_ids; los_ = g.cand_ptr[d]; his_ = g.cand_ptr[d + 1];
    }
    // a later member's gen code for the scanned list: the same list of its own, or none
    int g_[3] = {WM_NO_GEN, WM_NO_GEN, WM_NO_GEN};
    for (int i2 = i + 1; i2 < j; ++i2) {
      const int d2 = ord_[i2];
      const int n2 = WM_GPV(d2, WM_H_NBN);
      for (int t = 0; t < n2 && shp_ >= 0; ++t)
        if (WM_GPV(d2, WM_O_BN + 3 * t) == shp_ &&
            WM_GPV(d2, WM_O_BN + 3 * t + 1) == shr_) { g_[i2] = t; break; }
    }
    for (long long base_ = los_; base_ < his_; base_ += 32) {
      const long long t_ = base_ + lane;
      bool ok_ = t_ < his_;
      const int z_ = ok_ ? __ldg(as_ + t_) : 0;
      if (ok_) ok_ = wm_check(d, z_, sh_, t_, m_);
      int bits_ = ok_ ? 1 << i : 0;
      for (int i2 = i + 1; i2 < j; ++i2)
        if (ok_ && wm_check(ord_[i2], z_, g_[i2], t_, m_)) bits_ |= 1 << i2;
      // the masks whose lowest member is i: i alone, then with later members
      for (int h = 0; h < (1 << (j - i - 1)); ++h) {
        const int mask = (1 << i) | (h << (i + 1));
        s_[mask] += __popc(__ballot_sync(WM_FULL, (bits_ & mask) == mask));
      }
    }
    if (s_[1 << i] == 0) return 0ull;
  }
  if (j == 2) return (unsigned long long)(s_[1] * s_[2] - s_[3]);
  return (unsigned long long)(s_[1] * s_[2] * s_[4] - s_[3] * s_[4] - s_[5] * s_[2]
                              - s_[6] * s_[1] + 2 * s_[7]);
}

// the last depths the whole warp counts (render.warp_group): twins or independent vertices
__device__ __forceinline__ unsigned long long wm_warp_group(const int* r, int lane) {
  return WM_GRP(WM_G_KIND) == 4 ? wm_indep_warp(r, lane) : wm_twin_warp(r, lane);
}
#endif

__device__ __forceinline__ bool wm_check_d0(int c, int gen, long long gpos) {
  return wm_check(0, c, gen, gpos, nullptr);
}

// rebuild the partial match from a warp's stack and run one task (render._stack_task)
__device__ __forceinline__ bool wm_stack_task(int d, const WmStack& S, int e, int off, int& c,
                                              int& ngen, int& nlen, int& nskip,
                                              unsigned long long& ncnt, int* row) {
  (void)ncnt;
  int m_[WM_K];
  int i_ = e;
  for (int j = d - 1; j >= 0; --j) {
    m_[j] = S.v[j][i_];
    if (j) i_ = S.p[j][i_];
  }
  const int gen = S.gen[d - 1][e];
  const long long gp = wm_gen_start(d, gen, m_) + S.sk[d - 1][e] + off;
  c = wm_arr(d, gen)[gp];
  if (!wm_check(d, c, gen, gp, m_)) return false;
  if (d < WM_K - 1) {
    m_[d] = c;
#if WM_LEAF && WM_WARP_GROUP
    // twins: the partial match goes to row, for the warp to count (wm_warp_group)
    if (d == WM_LEAF_D - 1) {
      for (int j = 0; j <= d; ++j) row[j] = m_[j];
      return true;
    }
#elif WM_LEAF
    if (d == WM_LEAF_D - 1) { ncnt = wm_leaf(m_); return true; }
#endif
    long long ns_;
    wm_gen(d + 1, m_, ngen, ns_, nlen, nskip);
  } else {
    for (int j = 0; j < d; ++j) row[j] = m_[j];
    row[d] = c;
  }
  return true;
}

// depth switches over a materialised partial match row[0..d-1] (render._row_dispatch)
__device__ __forceinline__ void wm_row_gen(int d, const int* row, int& gen, long long& start,
                                           int& len, int& skip) {
  gen = 0; start = 0; len = 0; skip = 0;
  if (d >= 1 && d < WM_K) wm_gen(d, row, gen, start, len, skip);
}

__device__ __forceinline__ bool wm_row_task(int d, const int* row, int gen, long long pos,
                                            int& c) {
  if (d < 1 || d >= WM_K) return false;
  c = wm_arr(d, gen)[pos];
  return wm_check(d, c, gen, pos, row);
}
"""


def _counts(plan: Plan, groups: str) -> bool:
    """Whether count mode counts some depths of ``plan`` from list sizes (``WM_LEAF_OK``)."""
    return leaf_first(plan, groups) < int(plan.k)


def render_plan_generic(plan: Plan, groups: str = DEFAULT_GROUPS) -> str:
    """The ``#define`` lines of the generic module for ``plan``'s size (as
    :func:`.render.render_plan`, with ``WM_TRIM`` 1, ``WM_GP_STRIDE``, ``WM_G_N`` and
    ``WM_LEAF_D`` read from the group record at run time)."""
    k = int(plan.k)
    return "\n".join([f"#define WM_K {k}",
                      f"#define WM_DIRECTED {1 if plan.directed else 0}",
                      f"#define WM_CAND_GEN {CAND_GEN}",
                      "#define WM_TRIM 1",
                      f"#define WM_LEAF_OK {int(_counts(plan, groups))}",
                      "#define WM_LEAF_D (WM_GRP(WM_G_FIRST))",
                      f"#define WM_WARP_GROUP {int(warp_group(plan, groups) is not None)}",
                      f"#define WM_LEAF_TAB {int(uses_table(plan, groups))}",
                      f"#define WM_GP_STRIDE {_stride(k)}",
                      f"#define WM_G_N {_group_n(k)}",
                      "#define WM_GENERIC 1"]) + "\n"


def render_functions_generic(plan: Plan) -> str:
    """The device functions of the generic module (after ``common.cuh``): the functions
    the kernels call (``wm_check_d0``, ``wm_stack_task``, ``wm_row_gen``, ``wm_row_task``,
    ``wm_row_leaf``), as loops over the depth's record, so that the text does not grow
    with ``k`` and compiles in about the time of a small query's module."""
    k = int(plan.k)
    offs = "\n".join([f"#define WM_H_VLAB {H_VLAB}", f"#define WM_H_DOUT {H_DOUT}",
                      f"#define WM_H_DIN {H_DIN}", f"#define WM_H_RESTR {H_RESTR}",
                      f"#define WM_H_NBN {H_NBN}", f"#define WM_H_NNA {H_NNA}",
                      f"#define WM_H_NRES {H_NRES}", f"#define WM_O_BN {_bn(k, 0)}",
                      f"#define WM_O_NA {_na(k, 0)}", f"#define WM_O_RES {_res(k, 0)}",
                      f"#define WM_O_LEAF {_leafc(k, 0)}",
                      f"#define WM_G_FIRST {G_FIRST}", f"#define WM_G_KIND {G_KIND}",
                      f"#define WM_G_CHAIN {G_CHAIN}", f"#define WM_G_J {G_J}",
                      f"#define WM_G_TAB {G_TAB}",
                      f"#define WM_G_LEAVES {G_LEAVES}", f"#define WM_G_CODES {G_CODES}",
                      f"#define WM_NO_GEN {NO_GEN}"])
    return offs + "\n" + _GENERIC_BODY


def generic_signature(plan: Plan, groups: str = DEFAULT_GROUPS) -> str:
    """What the generic module's text depends on: ``k``, directedness, leaf counting (a
    last leaf or a group of leaves: which, and where, is in the table), twins or
    independent vertices (``WM_WARP_GROUP``: which is in the table), and leaves counted
    from a per-vertex table (``WM_LEAF_TAB``)."""
    return (f"generic-k{int(plan.k)}-d{int(bool(plan.directed))}"
            f"-l{int(_counts(plan, groups))}"
            f"-t{int(warp_group(plan, groups) is not None)}"
            f"-b{int(uses_table(plan, groups))}")
