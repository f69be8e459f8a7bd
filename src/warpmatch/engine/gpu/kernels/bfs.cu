// warpmatch GPU engine: the BFS phase that fills the initial task pool
// (gMatch 4.3, "Initialization Phase").
//
// The pool is a row-major int32 array of partial matches of one depth d. One
// expansion step maps depth d to d+1 with one thread per fine-grained task
// (partial match, candidate): wm_bfs_gen gives every partial match its local
// candidate list, the host turns the lengths into an exclusive prefix sum, and
// wm_bfs_expand lets thread t find its partial match by binary search in that
// prefix sum and check its candidate. The host compacts the survivors.

// the device clock, so the host can turn a time limit into a deadline
extern "C" __global__ void wm_clock(unsigned long long* t) { *t = wm_now(); }

// depth 0: which roots (the plan's depth-0 candidate set) pass label and degree
extern "C" __global__ void wm_bfs_roots(const int* __restrict__ roots, long long n,
                                        unsigned char* __restrict__ flag) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    flag[i] = wm_check_d0(roots[i], 0, 0) ? 1 : 0;
  }
}

// local candidate list of depth d for each pool row
extern "C" __global__ void wm_bfs_gen(const int* __restrict__ pool, long long n, int d,
                                      long long* __restrict__ start, long long* __restrict__ len,
                                      unsigned char* __restrict__ gen) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    int gn, ln, sk;
    long long st;
    wm_row_gen(d, pool + i * d, gn, st, ln, sk);
    start[i] = st;
    len[i] = ln;
    gen[i] = (unsigned char)gn;
  }
}

// one thread per task t < total: offs is the exclusive prefix sum of len (n+1 entries)
extern "C" __global__ void wm_bfs_expand(const int* __restrict__ pool, long long n, int d,
                                         const long long* __restrict__ start,
                                         const long long* __restrict__ offs,
                                         const unsigned char* __restrict__ gen, long long total,
                                         int* __restrict__ cand, unsigned char* __restrict__ flag) {
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
       t += (long long)gridDim.x * blockDim.x) {
    // largest i with offs[i] <= t (rows with empty lists share offsets; this
    // picks the one whose range holds t)
    long long lo = 0, hi = n;
    while (hi - lo > 1) {
      const long long mid = (lo + hi) >> 1;
      if (offs[mid] <= t) lo = mid; else hi = mid;
    }
    int c = -1;
    const bool ok = wm_row_task(d, pool + lo * d, gen[lo], start[lo] + (t - offs[lo]), c);
    cand[t] = c;
    flag[t] = ok ? 1 : 0;
  }
}

#if WM_LEAF && WM_LEAF_TAB
// count mode, leaves counted from a table (render.table_leaves): for each of n vertices
// (verts[i], or i where all is set), how many entries of its list the leaves may take,
// a warp a vertex (wm_tab_row)
extern "C" __global__ void wm_leaf_table(const int* __restrict__ verts, long long n, int all,
                                         int* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  const long long w0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
  const long long nw = ((long long)gridDim.x * blockDim.x) >> 5;
  for (long long i = w0; i < n; i += nw) {
    const int v = all ? (int)i : verts[i];
    const int c = wm_tab_row(v, lane);
    if (lane == 0) out[v] = c;
  }
}
#endif

#if WM_LEAF && WM_WARP_GROUP
// count mode, pool rows of depth WM_LEAF_D below twins or independent vertices: one warp
// per row (wm_warp_group)
extern "C" __global__ void wm_bfs_leaf(const int* __restrict__ pool, long long n,
                                       unsigned long long* __restrict__ total) {
  const int lane = threadIdx.x & 31;
  const long long w0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
  const long long nw = ((long long)gridDim.x * blockDim.x) >> 5;
  unsigned long long mine = 0;
  for (long long i = w0; i < n; i += nw) {
    const unsigned long long c = wm_warp_group(pool + i * WM_LEAF_D, lane);
    if (lane == 0) mine += c;
  }
  if (lane == 0 && mine) atomicAdd(total, mine);
}
#elif WM_LEAF
// count mode, pool rows of depth WM_LEAF_D: the leaves' matches of each row, summed
extern "C" __global__ void wm_bfs_leaf(const int* __restrict__ pool, long long n,
                                       unsigned long long* __restrict__ total) {
  unsigned long long mine = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    mine += wm_row_leaf(pool + i * WM_LEAF_D);
  }
  mine = wm_warp_sum(mine);
  if ((threadIdx.x & 31) == 0 && mine) atomicAdd(total, mine);
}
#endif
