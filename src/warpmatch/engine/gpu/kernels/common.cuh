// warpmatch GPU engine: declarations shared by every kernel.
//
// Compiled at run time by NVRTC (no host headers). The source the engine
// compiles is, in order: the plan's #defines (render.py), warp.cuh, this file, the
// plan's generated device functions (render.py), then one or more kernel
// files (bfs.cu, fine.cu, coarse.cu). Options come in as -D macros:
//   WM_WARPS    warps per block (fine/coarse kernels)
//   WM_BATCH    1: warp-level batch exploration (gMatch 4.2); 0: one task group at a time
//   WM_LIST     1: write matches to a buffer; 0: count
//   WM_STEAL    1: work stealing after the initial pool is exhausted (gMatch 4.3)
//   WM_PROFILE  1: count warp steps and tasks, for the idle-lane rate (gMatch 2.3)
// and from the plan (render.py): WM_K, WM_DIRECTED, WM_TRIM (some depth's lists
// are cut to their symmetry-restriction range), WM_LEAF_OK (count mode counts depths
// WM_LEAF_D..WM_K-1 with wm_leaf_count instead of one lane per candidate: a last leaf,
// or a group of leaves, render.leaf_first) and WM_WARP_GROUP (those depths are twins or
// independent vertices, counted by the whole warp with wm_warp_group: render.warp_group).
#ifndef WM_COMMON_CUH
#define WM_COMMON_CUH

// leaf counting is a count-mode shortcut: list mode writes every match
#define WM_LEAF (WM_LEAF_OK && !WM_LIST)

// The data graph and the plan's candidate sets, in device memory. Set once per
// launch through the module's constant memory (all lanes read the same
// pointer, so constant-cache broadcast is ideal). For undirected graphs the
// in_* pointers equal the out pointers.
struct WmGraph {
  const long long* indptr;
  const int* indices;
  const int* elab;
  const long long* in_indptr;
  const int* in_indices;
  const int* in_elab;
  const int* vlab;
  const long long* cand_ptr;
  const int* cand_ids;
  const void* part;       // rule 8 (inter-partition plans): part per vertex, else unused
  // rule 8's cut neighbours (Plan.cut_graph: a last plain leaf is counted from them);
  // for undirected graphs the in_* pointers equal the out pointers; else unused
  const long long* cut_indptr;
  const int* cut_indices;
  const long long* cut_in_indptr;
  const int* cut_in_indices;
  // count mode, WM_LEAF_TAB: per data vertex, how many entries of its list the last leaves
  // may take (render.table_leaves; filled by wm_leaf_table), else unused
  const int* leaf_tab;
};

__constant__ WmGraph g;

// rule 8's part ids: one byte each with at most 256 parts (render.part_ctype)
#ifndef WM_PART_T
#define WM_PART_T int
#endif
#define WM_PART(v) ((int)((const WM_PART_T*)g.part)[v])

// first position in a[lo, hi) whose value is >= x
__device__ __forceinline__ long long wm_lower_bound(const int* __restrict__ a, long long lo,
                                                    long long hi, int x) {
  while (lo < hi) {
    const long long mid = lo + ((hi - lo) >> 1);
    if (__ldg(a + mid) < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

__device__ __forceinline__ bool wm_in_sorted(const int* __restrict__ a, long long lo,
                                             long long hi, int x) {
  const long long p = wm_lower_bound(a, lo, hi, x);
  return p < hi && __ldg(a + p) == x;
}

// Is matched vertex m joined to candidate c with label el (-1: any)? dr 0: edge
// m -> c, searched in out(m); dr 1: edge c -> m, searched in in(m). Always m's
// list, never the shorter of the two: the lanes of a step mostly share m, so m's
// row bounds and the top of its search tree are in cache, while choosing by length
// costs every lane an uncached load of c's row bounds. On a 10^8-edge power-law
// graph (H100) the triangle count went from 0.305 to 0.087 s with this, 4-clique
// from 0.756 to 0.242 s. A 4,000,000-degree m costs 22 probes, the first of them
// shared, and no buffer is sized by the degree (gMatch 2.3).
__device__ __forceinline__ bool wm_bedge(int m, int c, int dr, int el) {
  const long long* ip = dr == 0 ? g.indptr : g.in_indptr;
  const int* ix = dr == 0 ? g.indices : g.in_indices;
  const long long a0 = ip[m], a1 = ip[m + 1];
  const long long p = wm_lower_bound(ix, a0, a1, c);
  if (p >= a1 || __ldg(ix + p) != c) return false;
  return el < 0 || (dr == 0 ? g.elab : g.in_elab)[p] == el;
}

// Rule 8 of the Plan contract (PBE's DupRemove): does data edge x -> y come after
// the prime edge px -> py in the order of ordered pairs? Undirected callers pass
// (min, max) pairs.
__device__ __forceinline__ bool wm_after(int x, int y, int px, int py) {
  return x > px || (x == px && y > py);
}

// Rule 8 for a plain last leaf of x (WM_CUT_LEAF): the t such that the edge joining x and
// c (x -> c when dr is 0, c -> x when 1; {x, c} undirected) is at most (k0, k1) in the edge
// order iff c < t (c != x). That key only grows with c, so the cut neighbours of x on either
// side of an edge are a prefix and a suffix of its sorted cut list (engine/_cpu_kernels.py
// has the same function, _cut_below).
__device__ __forceinline__ long long wm_cut_below(int x, long long k0, long long k1, int dr) {
  const long long big = 1ll << 62;
  if (WM_DIRECTED && dr == 1) return x <= k1 ? k0 + 1 : k0;     // key (c, x)
  if (x < k0) return big;
  if (x == k0) return k1 + 1;
  if (WM_DIRECTED) return 0;                                      // key (x, c) > (k0, k1)
  return x <= k1 ? k0 + 1 : k0;                                   // undirected, c < x
}

// how many cut neighbours of x (out-list when dr is 0, in-list when 1) are below v
__device__ __forceinline__ long long wm_cut_rank(int x, int dr, long long v) {
  const long long* ip = dr == 0 ? g.cut_indptr : g.cut_in_indptr;
  const int* ix = dr == 0 ? g.cut_indices : g.cut_in_indices;
  const long long lo = ip[x], hi = ip[x + 1];
  // ids are below 2^31 - 1 (n fits an int): a larger v is the end of the list
  const int w = v > 0x7fffffffll ? 0x7fffffff : (v < 0 ? 0 : (int)v);
  return wm_lower_bound(ix, lo, hi, w) - lo;
}

// Leaf groups (render._group): the entries common to two or three sorted lists, each
// entry of the shortest searched in the others from where the last search ended.
__device__ __forceinline__ long long wm_common2(const int* a, long long alo, long long ahi,
                                                const int* b, long long blo, long long bhi) {
  if (ahi - alo > bhi - blo) {
    const int* t = a; a = b; b = t;
    long long x = alo; alo = blo; blo = x;
    x = ahi; ahi = bhi; bhi = x;
  }
  long long n = 0;
  for (long long i = alo; i < ahi && blo < bhi; ++i) {
    const int v = __ldg(a + i);
    blo = wm_lower_bound(b, blo, bhi, v);
    if (blo < bhi && __ldg(b + blo) == v) { ++n; ++blo; }
  }
  return n;
}

__device__ __forceinline__ long long wm_common3(const int* a, long long alo, long long ahi,
                                                const int* b, long long blo, long long bhi,
                                                const int* c, long long clo, long long chi) {
  // drive by the shortest: rotate it into a
  if (bhi - blo < ahi - alo && bhi - blo <= chi - clo) {
    const int* t = a; a = b; b = t;
    long long x = alo; alo = blo; blo = x;
    x = ahi; ahi = bhi; bhi = x;
  } else if (chi - clo < ahi - alo) {
    const int* t = a; a = c; c = t;
    long long x = alo; alo = clo; clo = x;
    x = ahi; ahi = chi; chi = x;
  }
  long long n = 0;
  for (long long i = alo; i < ahi && blo < bhi && clo < chi; ++i) {
    const int v = __ldg(a + i);
    blo = wm_lower_bound(b, blo, bhi, v);
    if (blo >= bhi || __ldg(b + blo) != v) continue;
    clo = wm_lower_bound(c, clo, chi, v);
    if (clo < chi && __ldg(c + clo) == v) ++n;
  }
  return n;
}

// a matched vertex in the sets of bitmask in (of j leaves): out of every overlap it is in
__device__ __forceinline__ void wm_unmatch(long long* s, int in, int j) {
  for (int mask = 1; mask < (1 << j); ++mask)
    if ((mask & in) == mask) --s[mask];
}

// s (s-1) ... (s-j+1) and C(s, j) (exact at every step), for s >= j
__device__ __forceinline__ unsigned long long wm_falling(unsigned long long s, int j) {
  unsigned long long n = 1;
  for (int i = 0; i < j; ++i) n *= s - i;
  return n;
}

__device__ __forceinline__ unsigned long long wm_choose(unsigned long long s, int j) {
  unsigned long long n = 1;
  for (int i = 1; i <= j; ++i) n = n * (s - j + i) / i;
  return n;
}

// A warp's execution stack (gMatch 5.1), in shared memory: level l holds up
// to 32 partial matches of depth l as (vertex, parent index at level l-1);
// gen/len name the local candidate list of depth l+1 that each one generates
// (with WM_TRIM, sk is where the list's restriction range starts in it).
// The walk state (wp = next entry, wo = offset in it, wn = entries) is the
// two-pointer cursor over the level's virtual task pool (gMatch 4.2).
// Level K-1 is never stored: its matches are counted or written at once.
#if WM_K > 1
#define WM_LEVELS (WM_K - 1)
#else
#define WM_LEVELS 1
#endif
struct WmStack {
  int v[WM_LEVELS][32];
  int len[WM_LEVELS][32];
  unsigned char p[WM_LEVELS][32];
  unsigned char gen[WM_LEVELS][32];
#if WM_TRIM
  int sk[WM_LEVELS][32];
#endif
  int wp[WM_LEVELS];
  int wo[WM_LEVELS];
  int wn[WM_LEVELS];
  unsigned char owner[32];   // scratch: task-pool position -> lane of its entry
};

// Counter slots shared by the fine and coarse kernels (unsigned long long).
#define WM_C_POOL 0      // next pool item to fetch
#define WM_C_COUNT 1     // raw matches (count mode)
#define WM_C_STEPS 2     // warp steps (profile)
#define WM_C_TASKS 3     // tasks checked (profile)
#define WM_C_CURSOR 4    // rows written (list mode)
#define WM_C_OVERFLOW 5  // list buffer overflowed: the slice is re-run smaller
#define WM_C_STEALS 6    // records taken by idle warps
#define WM_C_ABORT 7     // the deadline passed: every warp stops, the result is void
#define WM_C_SOFT 8      // set by the host: after this device time (0: never) no warp
                         // fetches pool items; the fetched ones are finished
#define WM_C_N 9

__device__ __forceinline__ unsigned long long wm_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// May a warp fetch more of the pool? Not past the soft stop (WM_C_SOFT): the launch then
// ends once the items fetched so far are done, and WM_C_POOL (clipped to the pool) says
// how many that is. Lane 0 only.
__device__ __forceinline__ bool wm_may_fetch(const unsigned long long* counters) {
  const unsigned long long soft = ((const volatile unsigned long long*)counters)[WM_C_SOFT];
  return soft == 0 || wm_now() <= soft;
}

// every warp stops once the list buffer overflowed or the deadline passed
__device__ __forceinline__ bool wm_stopped(unsigned long long* counters) {
  volatile unsigned long long* vc = counters;
  return vc[WM_C_OVERFLOW] != 0 || vc[WM_C_ABORT] != 0;
}

// lane 0 checks the clock (deadline 0: none); the result is warp-uniform
__device__ __forceinline__ bool wm_check_deadline(unsigned long long* counters,
                                                  unsigned long long deadline, int lane) {
  int stop = 0;
  if (lane == 0) {
    if (deadline && wm_now() > deadline) atomicExch(counters + WM_C_ABORT, 1ull);
    stop = wm_stopped(counters);
  }
  return __shfl_sync(WM_FULL, stop, 0) != 0;
}

// List mode, last depth: the lanes whose match is valid write their row (row[0..K-1],
// depth order) at the global cursor, in lane order. A step that would pass out_cap
// sets the overflow flag (every warp then stops and the host re-runs the slice
// smaller) and writes nothing. Warp-uniform call.
__device__ __forceinline__ void wm_emit_rows(bool valid, const int* row,
                                             unsigned long long* counters, int* __restrict__ out,
                                             long long out_cap, int lane) {
  const unsigned vm = __ballot_sync(WM_FULL, valid);
  if (!vm) return;
  const int cnt = __popc(vm);
  unsigned long long pos = 0;
  if (lane == 0) {
    pos = atomicAdd(counters + WM_C_CURSOR, (unsigned long long)cnt);
    if (pos + cnt > (unsigned long long)out_cap) atomicExch(counters + WM_C_OVERFLOW, 1ull);
  }
  pos = __shfl_sync(WM_FULL, pos, 0);
  if (valid && pos + cnt <= (unsigned long long)out_cap) {
    int* o_ = out + (long long)(pos + __popc(vm & ((1u << lane) - 1u))) * WM_K;
#pragma unroll
    for (int i = 0; i < WM_K; ++i) o_[i] = row[i];
  }
}

#endif  // WM_COMMON_CUH
