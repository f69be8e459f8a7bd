// warpmatch GPU delta engine: incremental matching of one batch (GCSM §V-C) with
// gMatch's fine-grained warp execution (gMatch §4-5, as in engine/gpu/kernels/fine.cu).
//
// Compiled by NVRTC (no host headers) with -D style #defines and
// engine/gpu/kernels/warp.cuh (shared warp helpers) prepended and kernels/storage.cu
// (the cache and mirror upkeep kernels) appended by _modules.py:
//   WM_K        query vertices;  WM_WARPS  warps per block
//   WM_LIST     1: write matches;  0: count per update
//   WM_PROFILE  1: count row reads per vertex into g.acc (cache-coverage studies)
//   WM_SAMPLE   1: the access-frequency estimator (see "Sampling" below): no counts,
//               weighted row reads per vertex into wm_s_acc
//   WM_PLAN_CAP ints of the packed delta plans in constant memory
//
// Work: a task is (valid update u, delta plan j); it is cut into sub-tasks of
// at most `chunk` candidates of depth 2 (wm_delta_len measures every task's
// depth-2 list first; the host's device-side steps choose `chunk`, at most
// 32, and turn the lengths into prefix sums), so that the subtree of a hub
// endpoint is spread over many warps instead of making one warp the straggler of
// the whole batch. With GpuDeltaEngine(split=True), a small batch of a query of 4 or
// more vertices gets chunks as small as one candidate: its few tasks would otherwise
// keep a few hundred warps busy with lists of thousands (_device_cache.py,
// split_chunk). A warp takes one sub-task at a time through an atomic counter;
// the task's state p and sign follow stream/types.py (p = u+1 for insert/query-edge
// and delete/non-edge, else u).
// Depths 0 and 1 are the update's endpoints; depths 2..K-1 are extended with
// gMatch's warp-level batch exploration: the warp's shared-memory stack keeps
// up to 32 partial matches per level, the level's virtual task pool is the
// concatenation of their candidate lists, and every step hands 32 (entry,
// offset) tasks to the 32 lanes; each lane tests its candidate against the
// plan's rules with binary searches in state p and the survivors are compacted
// into the next level with a ballot.
//
// Adjacency of x in one direction (0 out, 1 in), in state p:
//   overlay row (device)       if o_idx[dir][x] >= 0   (entries alive iff ins < p <= dl)
//   DCSR cache row (device)    elif slot[dir][x] >= 0  (GCSM §V-B)
//   storage row                otherwise: found through the device-resident row
//                              index (b_start, b_deg), its entries read from host
//                              memory by zero-copy (GCSM's pinned + mapped lists),
//                              or from the device mirror (policy "device")
// Row kinds: 0/1 storage out/in, 2/3 cache, 4/5 overlay.
//
// Sampling (WM_SAMPLE, GCSM §IV on the GPU): the same kernel estimates how often
// each vertex's rows will be read, by running a random part of the batch's
// execution forest. A sub-task runs with probability q0 (hash of the seed and the
// sub-task id below wm_s_thr[0]); below it, every surviving partial match is
// extended further with probability q (wm_s_thr[1]): a coin keyed by the sub-task,
// the depth, the candidate and the parent's last vertex (not the whole prefix: two
// partial matches of one sub-task that end in the same pair share their coin; each
// coin is still uniform, so the estimate stays unbiased), and a row read
// made while testing candidates of depth d adds wm_s_w[d] = 1 / (q0 q^(d-2)), the
// inverse of the probability that the node is reached, to wm_s_acc[vertex]. That
// is eq. (3)'s Horvitz-Thompson estimator, with GCSM's continuation probability
// |V|/D per node (1/D per child) replaced by a fixed q per child, so that the
// estimate of every vertex is unbiased and its cost a chosen fraction of the
// batch's work, spent on the device instead of on host cores. Three deviations, as
// the estimate ranks rows for the cache rather than counting reads (walk.py's
// for_cache models all three):
// - only storage rows are credited (wm_touch): the cache holds no other;
// - a binary search between two storage rows credits both (wm_edge), since caching
//   either one moves the search to the device, unless the cached row is so much
//   longer that its probes cost more than the host row's (wm_search_cost);
// - the last level is not run but credited by look-ahead: a partial match of level
//   K-2 credits its next generating list (wm_gen) and every other test's storage
//   row once per entry of that list (wm_look); when the list is an overlay row, the
//   match continues into the last level with probability q, whose candidates credit
//   their storage row once per test whose two rows are storage rows, and search
//   nothing (wm_credit). Most host reads are the last level's searches, of rows
//   next to the batch's endpoints that few batches read: sampling that level missed
//   most of them (square query, 10^7 edges, batches of 4096: host reads of 154 MB
//   a batch with the cache chosen from a sampled last level, 42 MB with the
//   look-ahead, 139 MB with the degree cache; bench/stream.py on an H100).
// (Also weighting each read by the PCIe sectors it moves was tried and measured
// slower: square query, 10^7 edges, batch 4096, counting kernel 33.5 ms against
// 23.3 ms; bench/stream.py on an H100.)
#ifndef WM_SAMPLE
#define WM_SAMPLE 0
#endif


struct WmDelta {
  const long long* b_start[2];
  const int* b_deg[2];
  const int* o_idx[2];
  const long long* o_off[2];
  const int* slot[2];
  const long long* c_off[2];
  const int* nbr[6];
  const int* lab[6];          // nullptr: no edge labels (every label is 0)
  const int* ins[2];
  const int* dl[2];
  const int* vlab;            // nullptr: unlabeled (vertex labels are not checked)
  const int* u_src;
  const int* u_dst;
  const int* u_op;
  const int* u_lab;
  const int* upd;             // valid update ids, in order
  const long long* row_base;  // list mode: first output row of each update
  unsigned long long* acc;    // WM_PROFILE: row reads per vertex
  const unsigned long long* qmask;  // candidate filter: bit u of qmask[v] = v may be query
                              // vertex u (stream/filter.py); nullptr: no filter
  long long n_upd;            // valid updates
  int n_plan;
  int n;                      // vertices (after the batch)
  int n_store;                // vertices with a storage row
  int host_store;             // 1: storage rows are read from host memory (zero-copy)
};

__constant__ WmDelta g;
__constant__ int wm_plan[WM_PLAN_CAP];
#if WM_SAMPLE
__constant__ float* wm_s_acc;                 // estimated row reads per vertex
__constant__ float wm_s_w[WM_K + 1];          // weight of a read at depth d
__constant__ unsigned long long wm_s_thr[2];  // sub-task, continuation: coin < thr (thr <= 2^32)
__constant__ unsigned long long wm_s_seed;

// splitmix64 finaliser: a counter-based coin, so a sample depends on the seed only
__device__ __forceinline__ unsigned int wm_coin(unsigned long long a, unsigned long long b) {
  unsigned long long z = wm_s_seed + a * 0x9E3779B97F4A7C15ull + b * 0xD1B54A32D192ED03ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (unsigned int)((z ^ (z >> 31)) >> 32);
}
#endif

// packed plan layout: wm_plan[0..13] = offsets of the arrays below (engine.py)
#define WM_O_ORDER 0
#define WM_O_VLABEL 1
#define WM_O_BNPTR 2
#define WM_O_BNPOS 3
#define WM_O_BNDIR 4
#define WM_O_BNEL 5
#define WM_O_NAPTR 6
#define WM_O_NAPOS 7
#define WM_O_NADIR 8
#define WM_O_RESPTR 9
#define WM_O_RESPOS 10
#define WM_O_RESSIGN 11
#define WM_O_KIND 12
#define WM_O_PEL 13
#define WM_PA(arr, i) wm_plan[wm_plan[arr] + (i)]
#define WM_PJ(arr, j, d) wm_plan[wm_plan[arr] + (j) * (WM_K + 1) + (d)]
#define WM_PK(arr, j, d) wm_plan[wm_plan[arr] + (j) * WM_K + (d)]

// counters (unsigned long long)
#define WM_C_TASK 0       // next task
#define WM_C_EL_HOST 1    // storage bytes read (zero-copy when the storage is on the host)
#define WM_C_EL_CACHE 2   // cache bytes read
#define WM_C_EL_OVL 3     // overlay bytes read
#define WM_C_ROW_HOST 4   // storage rows read
#define WM_C_ROW_CACHE 5  // cache rows read
#define WM_C_ROW_OVL 6    // overlay rows read
#define WM_C_N 8

// per-lane tallies by source (0 storage, 1 cache, 2 overlay): bytes read, rows read
struct WmCnt {
  unsigned long long el[3];
  unsigned long long row[3];
  int on;   // 0: a repeated read (a sub-task's root checks): not profiled
#if WM_SAMPLE
  float w;  // weight of this lane's reads at the current depth
#endif
};

__device__ __forceinline__ void wm_cnt_reset(WmCnt& c, int on) {
#pragma unroll
  for (int q = 0; q < 3; ++q) { c.el[q] = 0; c.row[q] = 0; }
  c.on = on;
#if WM_SAMPLE
  c.w = 0.f;
#endif
}

#if WM_K > 2
#define WM_LEVELS (WM_K - 1)
#else
#define WM_LEVELS 1
#endif

struct WmStack {
  long long off[WM_LEVELS][32];   // candidate list: first element, in its kind's arrays
  int v[WM_LEVELS][32];
  int len[WM_LEVELS][32];
  unsigned char p[WM_LEVELS][32];
  unsigned char gen[WM_LEVELS][32];   // backward edge (relative to the depth) of the list
  unsigned char kind[WM_LEVELS][32];  // row kind of the list
  int wp[WM_LEVELS];
  int wo[WM_LEVELS];
  int wn[WM_LEVELS];
  unsigned char owner[32];
};


// m[] stays in registers: every index is resolved by unrolled compares
__device__ __forceinline__ int wm_get(const int (&m)[WM_K], int i) {
  int r = m[0];
#pragma unroll
  for (int q = 1; q < WM_K; ++q) if (i == q) r = m[q];
  return r;
}
__device__ __forceinline__ void wm_put(int (&m)[WM_K], int i, int x) {
#pragma unroll
  for (int q = 0; q < WM_K; ++q) if (i == q) m[q] = x;
}

__device__ __forceinline__ int wm_src(int kind) { return kind >= 4 ? 2 : (kind >= 2 ? 1 : 0); }

__device__ __forceinline__ void wm_row(int x, int dir, long long& off, int& len, int& kind,
                                       WmCnt& c) {
  const int r = g.o_idx[dir][x];
  if (r >= 0) {
    off = g.o_off[dir][r];
    len = (int)(g.o_off[dir][r + 1] - off);
    kind = 4 + dir;
    return;
  }
#if !WM_SAMPLE   // the estimate ranks rows for the next cache: it reads no cache
  const int s = g.slot[dir][x];
  if (s >= 0) {
    // a cached row has slack (cache.row_capacity): its length is the row index's
    off = g.c_off[dir][s];
    len = g.b_deg[dir][x];
    kind = 2 + dir;
    return;
  }
#endif
  kind = dir;
  if (x >= g.n_store) { off = 0; len = 0; return; }
  off = g.b_start[dir][x];    // the row index is on the device: only entries cost host reads
  len = g.b_deg[dir][x];
}

__device__ __forceinline__ void wm_touch(int x, int kind, WmCnt& c) {
  c.row[wm_src(kind)] += 1;
#if WM_PROFILE
  if (c.on) atomicAdd(g.acc + x, 1ull);
#elif WM_SAMPLE
  // only storage rows can be cached: an overlay row's vertex is this batch's, and its
  // credit would outlive the batch in the averaged estimate
  if (c.on && kind < 2) atomicAdd(wm_s_acc + x, c.w);
#else
  (void)x;
#endif
}

// Probes of a binary search in `len` entries.
__device__ __forceinline__ int wm_probes(int len) { return 32 - __clz(len + 1); }

__device__ __forceinline__ int wm_label(int kind, long long q, WmCnt& c) {
  const int* L = g.lab[kind];
  if (L == nullptr) return 0;
  c.el[wm_src(kind)] += 4;
  return L[q];
}

// WM_HOST_COST: a probe of host memory (zero-copy) against one of device memory, set by
// engine.py from walk.HOST_COST so that walk.py's model of wm_edge uses the same rule
#ifndef WM_HOST_COST
#error "WM_HOST_COST must be defined (stream/gpu/_device.py sets it)"
#endif

// Probes of a binary search in a row of `len` entries, each WM_HOST_COST times dearer
// when the row is read from host memory: every probe is then a dependent PCIe round trip.
__device__ __forceinline__ int wm_search_cost(int len, bool host) {
  return host ? wm_probes(len) * WM_HOST_COST : wm_probes(len);
}

// Is there a data edge a -> b alive at state p with label el (-1 any)? Binary search
// in out(a) or in(b): the shorter one when both are in the same memory, else the
// cheaper one by wm_search_cost (a long row on the device, the overlay or the cache,
// beats a short one in host memory). walk.py's _edge makes the same choice.
__device__ bool wm_edge(int a, int b, int el, int p, WmCnt& c) {
  long long oa, ob;
  int la, lb, ka, kb;
  wm_row(a, 0, oa, la, ka, c);
  wm_row(b, 1, ob, lb, kb, c);
  const bool ha = ka < 2 && g.host_store, hb = kb < 2 && g.host_store;
  const bool in_a = ha == hb ? la <= lb : wm_search_cost(la, ha) <= wm_search_cost(lb, hb);
  long long lo, hi;
  int kind, x;
  if (in_a) { lo = oa; hi = oa + la; kind = ka; x = b; wm_touch(a, ka, c); }
  else { lo = ob; hi = ob + lb; kind = kb; x = a; wm_touch(b, kb, c); }
#if WM_SAMPLE
  // either storage row, if cached, would usually serve this search (the cost rule
  // above picks a cached row unless its probes cost more than 8 host probes of
  // the other): the estimate credits both
  if (ka < 2 && kb < 2 && c.on) atomicAdd(wm_s_acc + (in_a ? b : a), c.w);
#endif
  const int* N = g.nbr[kind];
  unsigned long long probes = 0;
  while (lo < hi) {
    const long long mid = lo + ((hi - lo) >> 1);
    ++probes;
    if (N[mid] < x) lo = mid + 1; else hi = mid;
  }
  const long long end = in_a ? oa + la : ob + lb;
  bool found = false;
  if (kind >= 4) {
    const int* I = g.ins[kind - 4];
    const int* D = g.dl[kind - 4];
    for (long long q = lo; q < end; ++q) {
      ++probes;
      if (N[q] != x) break;
      if (I[q] < p && p <= D[q]) {
        found = el < 0 || wm_label(kind, q, c) == el;
        break;
      }
    }
  } else if (lo < end) {
    ++probes;
    if (N[lo] == x) found = el < 0 || wm_label(kind, lo, c) == el;
  }
  c.el[wm_src(kind)] += 4 * probes;
  return found;
}

// Plan rules 1, 4, 5 for candidate c at depth d: the tests that read no row.
__device__ __forceinline__ bool wm_cheap(int d, int c, int j, const int (&m)[WM_K]) {
  const int want = WM_PK(WM_O_VLABEL, j, d);
  if (want != -1 && g.vlab != nullptr && g.vlab[c] != want) return false;
  if (g.qmask != nullptr && !((g.qmask[c] >> WM_PK(WM_O_ORDER, j, d)) & 1ull)) return false;
  const int r0 = WM_PJ(WM_O_RESPTR, j, d), r1 = WM_PJ(WM_O_RESPTR, j, d + 1);
  for (int t = r0; t < r1; ++t) {
    const int mj = wm_get(m, WM_PA(WM_O_RESPOS, t));
    if (WM_PA(WM_O_RESSIGN, t) > 0) { if (c <= mj) return false; }
    else if (c >= mj) return false;
  }
#pragma unroll
  for (int q = 0; q < WM_K; ++q) if (q < d && m[q] == c) return false;
  return true;
}

// Plan rules 1, 4-7 for candidate c at depth d (the generating edge `skip` is known).
__device__ bool wm_accept(int d, int c, int skip, int j, int p, const int (&m)[WM_K],
                          WmCnt& cnt) {
  if (!wm_cheap(d, c, j, m)) return false;
  const int b0 = WM_PJ(WM_O_BNPTR, j, d), b1 = WM_PJ(WM_O_BNPTR, j, d + 1);
  for (int t = b0; t < b1; ++t) {
    if (t == skip) continue;
    const int x = wm_get(m, WM_PA(WM_O_BNPOS, t));
    const int el = WM_PA(WM_O_BNEL, t);
    const bool ok = WM_PA(WM_O_BNDIR, t) == 0 ? wm_edge(x, c, el, p, cnt)
                                              : wm_edge(c, x, el, p, cnt);
    if (!ok) return false;
  }
  const int n0 = WM_PJ(WM_O_NAPTR, j, d), n1 = WM_PJ(WM_O_NAPTR, j, d + 1);
  for (int t = n0; t < n1; ++t) {
    const int x = wm_get(m, WM_PA(WM_O_NAPOS, t));
    const bool hit = WM_PA(WM_O_NADIR, t) == 0 ? wm_edge(x, c, -1, p, cnt)
                                               : wm_edge(c, x, -1, p, cnt);
    if (hit) return false;
  }
  return true;
}

// The candidate list of depth d: the shortest backward neighbour's row.
__device__ void wm_gen(int j, int d, const int (&m)[WM_K], int& gen, long long& off, int& len,
                       int& kind, WmCnt& cnt) {
  const int b0 = WM_PJ(WM_O_BNPTR, j, d), b1 = WM_PJ(WM_O_BNPTR, j, d + 1);
  int best_x = 0;
  len = -1;
  gen = 0;
  off = 0;
  kind = 0;
  for (int t = b0; t < b1; ++t) {
    const int x = wm_get(m, WM_PA(WM_O_BNPOS, t));
    long long o;
    int l, k;
    wm_row(x, WM_PA(WM_O_BNDIR, t), o, l, k, cnt);
    if (len < 0 || l < len) { len = l; off = o; kind = k; gen = t - b0; best_x = x; }
  }
  if (len < 0) len = 0;
  wm_touch(best_x, kind, cnt);
}

#if WM_SAMPLE
// The t-th test of depth d counting backward edges, then negative ones: its vertex and
// the direction of its row (0: the edge leaves it, so its out-row is searched).
__device__ __forceinline__ void wm_other(int t, int j, int d, const int (&m)[WM_K], int& y,
                                         int& dir) {
  const int b1 = WM_PJ(WM_O_BNPTR, j, d + 1);
  if (t < b1) {
    y = wm_get(m, WM_PA(WM_O_BNPOS, t));
    dir = WM_PA(WM_O_BNDIR, t);
  } else {
    const int q = WM_PJ(WM_O_NAPTR, j, d) + t - b1;
    y = wm_get(m, WM_PA(WM_O_NAPOS, q));
    dir = WM_PA(WM_O_NADIR, q);
  }
}

__device__ __forceinline__ int wm_tests_end(int j, int d) {
  return WM_PJ(WM_O_BNPTR, j, d + 1) + WM_PJ(WM_O_NAPTR, j, d + 1) - WM_PJ(WM_O_NAPTR, j, d);
}

// Is x's row in direction dir a storage row (no overlay row)? The sampler reads no cache.
__device__ __forceinline__ bool wm_stored(int x, int dir) { return g.o_idx[dir][x] < 0; }

// The sampler's look-ahead at the last level d (see "Sampling"; walk.py's _look): its
// generating list `gen` (relative, `len` entries) was credited by wm_gen; every other
// test's storage row is searched up to once per entry of that list. Returns how many
// tests have a storage row (0: the level's candidates need no credit either).
__device__ int wm_look(int j, int d, const int (&m)[WM_K], int gen, int len, WmCnt& c) {
  const int b0 = WM_PJ(WM_O_BNPTR, j, d), end = wm_tests_end(j, d);
  int others = 0;
  for (int t = b0; t < end; ++t) {
    if (t == b0 + gen) continue;
    int y, dir;
    wm_other(t, j, d, m, y, dir);
    if (!wm_stored(y, dir)) continue;
    ++others;
    if (c.on && len > 0) atomicAdd(wm_s_acc + y, c.w * (float)len);
  }
  return others;
}

// ... and the candidate c of the last level d, taken from an overlay list by the
// generating edge `skip`: if it passes the tests that read no row, its storage row
// is credited once per test whose two rows are storage rows.
__device__ void wm_credit(int d, int c, int skip, int j, const int (&m)[WM_K], WmCnt& cnt) {
  if (!wm_cheap(d, c, j, m)) return;
  const int end = wm_tests_end(j, d);
  int pairs = 0;
  for (int t = WM_PJ(WM_O_BNPTR, j, d); t < end; ++t) {
    if (t == skip) continue;
    int y, dir;
    wm_other(t, j, d, m, y, dir);
    if (wm_stored(y, dir) && wm_stored(c, 1 - dir)) ++pairs;
  }
  if (pairs && cnt.on) atomicAdd(wm_s_acc + c, cnt.w * (float)pairs);
}
#endif

// One lane's fine-grained task: candidate `off` of entry e's list, at depth d.
__device__ bool wm_task(int d, int j, int p, const WmStack& S, int e, int off, int (&m)[WM_K],
                        int& c, int& ngen, long long& noff, int& nlen, int& nkind,
                        WmCnt& cnt) {
  int i_ = e;
#pragma unroll
  for (int q = WM_K - 1; q >= 0; --q) {
    if (q < d) {
      m[q] = S.v[q][i_];
      if (q > 0) i_ = S.p[q][i_];
    }
  }
  const int kind = S.kind[d - 1][e];
  const long long idx = S.off[d - 1][e] + off;
  c = g.nbr[kind][idx];
  cnt.el[wm_src(kind)] += 4;
  if (kind >= 4) {
    const int ins = g.ins[kind - 4][idx], dl = g.dl[kind - 4][idx];
    if (!(ins < p && p <= dl)) return false;
  }
  const int b0 = WM_PJ(WM_O_BNPTR, j, d);
  const int t = b0 + S.gen[d - 1][e];
  const int el = WM_PA(WM_O_BNEL, t);
  if (el != -1 && wm_label(kind, idx, cnt) != el) return false;
#if WM_SAMPLE
  if (d == WM_K - 1) {   // the last level: credit, no searches
    wm_credit(d, c, t, j, m, cnt);
    return false;
  }
#endif
  if (!wm_accept(d, c, t, j, p, m, cnt)) return false;
  wm_put(m, d, c);
  if (d < WM_K - 1) wm_gen(j, d + 1, m, ngen, noff, nlen, nkind, cnt);
#if WM_SAMPLE
  // the last level is credited, not run; its candidates only from an overlay list
  if (d == WM_K - 2 && (wm_look(j, d + 1, m, ngen, nlen, cnt) == 0 || nkind < 4)) nlen = 0;
#endif
  return true;
}


// The root of task t (update u, plan j): the depth-0/1 checks of the update's
// endpoints in state p, then the generating list of depth 2 (off, len, kind,
// gen). Returns false if the endpoints cannot be the images of the plan's pair.
__device__ bool wm_root(long long t, int& u, int& j, int& p, int& sign, int (&m)[WM_K],
                        int& gn, long long& of, int& ln, int& kd, WmCnt& cnt) {
  u = g.upd[t / g.n_plan];
  j = (int)(t % g.n_plan);
  const int kind = WM_PA(WM_O_KIND, j);
  const bool up = (g.u_op[u] > 0) == (kind == 1);
  p = up ? u + 1 : u;
  sign = up ? 1 : -1;
  gn = 0; of = 0; ln = 0; kd = 0;
  const int s0 = g.u_src[u], s1 = g.u_dst[u];
  const int want0 = WM_PK(WM_O_VLABEL, j, 0);
  const int pel = WM_PA(WM_O_PEL, j);
  if (s0 == s1 || (want0 != -1 && g.vlab != nullptr && g.vlab[s0] != want0)
      || (g.qmask != nullptr && !((g.qmask[s0] >> WM_PK(WM_O_ORDER, j, 0)) & 1ull))
      || (kind == 1 && pel != -1 && g.u_lab[u] != pel)) return false;
  wm_put(m, 0, s0);
  if (!wm_accept(1, s1, -1, j, p, m, cnt)) return false;
  wm_put(m, 1, s1);
#if WM_K > 2
  wm_gen(j, 2, m, gn, of, ln, kd, cnt);
#else
  ln = 1;   // the update itself is the match
#endif
  return true;
}

// The length of every task's depth-2 list (0 if the root fails), which the host cuts
// into sub-tasks of `chunk` candidates. One thread per task; reads here are not
// counted (the sub-tasks count them).
extern "C" __global__ void wm_delta_len(long long t_begin, long long t_end,
                                        long long* __restrict__ lens) {
  for (long long t = t_begin + blockIdx.x * (long long)blockDim.x + threadIdx.x; t < t_end;
       t += (long long)gridDim.x * blockDim.x) {
    WmCnt c;
    wm_cnt_reset(c, 0);
    int m[WM_K];
#pragma unroll
    for (int q = 0; q < WM_K; ++q) m[q] = 0;
    int u, j, p, sign, gn, ln, kd;
    long long of;
    const bool ok = wm_root(t, u, j, p, sign, m, gn, of, ln, kd, c);
    lens[t - t_begin] = ok ? ln : 0;
  }
}

// Counting: plus[u] / minus[u] += raw matches. Listing: rows (query-vertex order)
// of update u go to out[row_base[u] + cursor[u]++ - first_row], with their sign.
// Sub-tasks s_begin..s_end-1 are run; sub_ptr[t - t_base] is the first sub-task of
// task t (an exclusive prefix sum over tasks t_base.., with one entry past the end),
// and sub_ptr[n_tasks + 1] is `chunk`, the depth-2 candidates of a sub-task.
// s_end < 0: every sub-task, up to sub_ptr[n_tasks] (read here, so that the host
// launches without waiting for the prefix sum).
extern "C" __global__ void __launch_bounds__(WM_WARPS * 32)
wm_delta(long long s_begin, long long s_end, const long long* __restrict__ sub_ptr,
         long long t_base, long long n_tasks, unsigned long long* counters,
         unsigned long long* plus, unsigned long long* minus,
         int* __restrict__ out, signed char* __restrict__ out_sign,
         unsigned long long* cursor, long long first_row) {
  __shared__ WmStack stacks[WM_WARPS];
  const int lane = threadIdx.x & 31;
  WmStack& S = stacks[threadIdx.x >> 5];
  const unsigned lt_mask = (1u << lane) - 1u;
  WmCnt cnt;
  wm_cnt_reset(cnt, 1);
#if WM_SAMPLE
  long long cur_s = 0;   // the current sub-task (warp-uniform): the coins' key
#endif
  (void)out; (void)out_sign; (void)cursor; (void)first_row; (void)plus; (void)minus;
  (void)S;
  if (s_end < 0) s_end = sub_ptr[n_tasks];
  const int chunk = (int)sub_ptr[n_tasks + 1];
  (void)chunk;
  int m[WM_K];
#pragma unroll
  for (int q = 0; q < WM_K; ++q) m[q] = 0;
  int level = -1;
  const int base = 1;
  int u = 0, j = 0, p = 0, sign = 1;
  unsigned long long found = 0;   // raw matches of the current sub-task (warp-uniform)
  while (true) {
    if (level < base) {
      // the sub-task is done: flush its count, take the next one
#if !WM_LIST && !WM_SAMPLE
      if (lane == 0 && found) atomicAdd((sign > 0 ? plus : minus) + u, found);
#endif
      found = 0;
      long long s = 0;
      if (lane == 0) s = s_begin + (long long)atomicAdd(counters + WM_C_TASK, 1ull);
      s = __shfl_sync(WM_FULL, s, 0);
      if (s >= s_end) break;
      int ok = 0;
#if WM_SAMPLE
      cur_s = s;
      const bool sampled = (unsigned long long)wm_coin((unsigned long long)s, 0x5157ull)
                           < wm_s_thr[0];
      if (lane == 0 && sampled) {
#else
      if (lane == 0) {
#endif
        // the task holding sub-task s: the last t with sub_ptr[t] <= s
        long long lo = 0, hi = n_tasks;
        while (hi - lo > 1) {
          const long long mid = (lo + hi) >> 1;
          if (sub_ptr[mid] <= s) lo = mid; else hi = mid;
        }
        const int part = (int)(s - sub_ptr[lo]);
        // the root's reads are made (and counted) once per task, by its first sub-task
        WmCnt tmp = cnt;
        tmp.on = part == 0;
#if WM_SAMPLE
        tmp.w = wm_s_w[2];
#endif
        int gn, ln, kd;
        long long of;
        ok = wm_root(t_base + lo, u, j, p, sign, m, gn, of, ln, kd, tmp);
#if WM_SAMPLE && WM_K == 3
        // depth 2 is the last level: credited, not run; its candidates only from an
        // overlay list
        if (ok && (wm_look(j, 2, m, gn, ln, tmp) == 0 || kd < 4)) ok = 0;
#endif
        if (part == 0) cnt = tmp;
        cnt.on = 1;
        if (ok) {
#if WM_K == 2
          found = 1;
#if WM_LIST
          const long long row = g.row_base[u] + (long long)atomicAdd(cursor + u, 1ull) - first_row;
          out[row * WM_K + WM_PK(WM_O_ORDER, j, 0)] = m[0];
          out[row * WM_K + WM_PK(WM_O_ORDER, j, 1)] = m[1];
          out_sign[row] = (signed char)sign;
#endif
          ok = 0;
#else
          const int c0 = part * chunk;
          S.v[0][0] = m[0];
          S.p[0][0] = 0;
          S.v[1][0] = m[1];
          S.p[1][0] = 0;
          S.gen[1][0] = (unsigned char)gn;
          S.off[1][0] = of + c0;
          S.len[1][0] = wm_min(ln - c0, chunk);
          S.kind[1][0] = (unsigned char)kd;
          S.wp[1] = 0;
          S.wo[1] = 0;
          S.wn[1] = 1;
#endif
        }
      }
      found = __shfl_sync(WM_FULL, found, 0);
      ok = __shfl_sync(WM_FULL, ok, 0);
      u = __shfl_sync(WM_FULL, u, 0);
      j = __shfl_sync(WM_FULL, j, 0);
      p = __shfl_sync(WM_FULL, p, 0);
      sign = __shfl_sync(WM_FULL, sign, 0);
      __syncwarp();
      level = ok ? base : -1;
      continue;
    }
#if WM_K > 2
    const int p_ = S.wp[level], o = S.wo[level], n = S.wn[level];
    if (p_ >= n) { --level; continue; }

    // ---- hand the next 32 tasks of this level's virtual task pool to the lanes
    int e, off;
    const int ntask = wm_hand_out(S.len[level], p_, o, n, &S.wp[level], &S.wo[level], S.owner,
                                  true, lane, e, off);
    const bool has = lane < ntask;
    const int d = level + 1;
    int c = -1, ngen = 0, nlen = 0, nkind = 0;
    long long noff = 0;
#if WM_SAMPLE
    cnt.w = wm_s_w[d];
#endif
#if WM_SAMPLE
    // a survivor continues with probability q: into the last level (credited, not
    // run) only from level K-2 and an overlay list (wm_task; see "Sampling")
    const bool tested = has && wm_task(d, j, p, S, e, off, m, c, ngen, noff, nlen, nkind, cnt);
    const bool valid = tested && (d < WM_K - 2 || nlen > 0)
        && wm_coin((unsigned long long)cur_s * 64 + d,
                   ((unsigned long long)(unsigned)c << 32) | (unsigned)wm_get(m, d - 1))
           < wm_s_thr[1];
#else
    const bool valid = has && wm_task(d, j, p, S, e, off, m, c, ngen, noff, nlen, nkind, cnt);
#endif
    if (d == WM_K - 1) {
      const unsigned vm = __ballot_sync(WM_FULL, valid);
      if (vm) {
        const int nv = __popc(vm);
        found += (unsigned long long)nv;
#if WM_LIST
        unsigned long long pos = 0;
        if (lane == 0) pos = atomicAdd(cursor + u, (unsigned long long)nv);
        pos = __shfl_sync(WM_FULL, pos, 0);
        if (valid) {
          const long long row = g.row_base[u] + (long long)pos + __popc(vm & lt_mask) - first_row;
          int* o_ = out + row * WM_K;
#pragma unroll
          for (int q = 0; q < WM_K; ++q) o_[WM_PK(WM_O_ORDER, j, q)] = m[q];
          out_sign[row] = (signed char)sign;
        }
#endif
      }
      __syncwarp();
      continue;
    }
    // ---- compact the survivors into the next level and descend (gMatch 5.1)
    const unsigned vm = __ballot_sync(WM_FULL, valid);
    if (vm) {
      if (valid) {
        const int idx = __popc(vm & lt_mask);
        S.v[d][idx] = c;
        S.p[d][idx] = (unsigned char)e;
        S.gen[d][idx] = (unsigned char)ngen;
        S.len[d][idx] = nlen;
        S.off[d][idx] = noff;
        S.kind[d][idx] = (unsigned char)nkind;
      }
      if (lane == 0) {
        S.wp[d] = 0;
        S.wo[d] = 0;
        S.wn[d] = __popc(vm);
      }
      level = d;
    }
    __syncwarp();
#else
    level = -1;
#endif
  }
  (void)lt_mask;
#if WM_SAMPLE
  (void)cur_s;
#endif
#pragma unroll
  for (int q = 0; q < 3; ++q) {
    const unsigned long long a = wm_warp_sum(cnt.el[q]);
    const unsigned long long b = wm_warp_sum(cnt.row[q]);
    if (lane == 0) {
      if (a) atomicAdd(counters + WM_C_EL_HOST + q, a);
      if (b) atomicAdd(counters + WM_C_ROW_HOST + q, b);
    }
  }
}
