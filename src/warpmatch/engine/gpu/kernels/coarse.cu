// warpmatch GPU engine: the coarse-grained model (gMatch 2.2, Algorithm 1,
// lines 8-26; STMatch / T-DFS style), kept as the baseline of the ablation in
// gMatch Table 5.
//
// One warp extends one partial match at a time: it materialises the whole
// feasible candidate set of the next depth in a per-warp, per-level buffer in
// global memory (the lanes check 32 candidates of the local list per step and
// append the survivors with a ballot), then walks that buffer depth-first.
// Each buffer must hold the longest local candidate list, so memory is
// O(warps * K * d_max) (gMatch 2.3, issue 1): the host sizes the grid to the
// memory budget and refuses when not even one warp fits.

extern "C" __global__ void __launch_bounds__(WM_WARPS * 32)
wm_coarse(const int* __restrict__ pool, long long pool_n, int d0,
          unsigned long long* counters, int* __restrict__ out, long long out_cap,
          int* __restrict__ buf, long long buf_cap, unsigned long long deadline) {
  __shared__ int Ms[WM_WARPS][WM_K];
  __shared__ long long cnt_s[WM_WARPS][WM_K];
  __shared__ long long idx_s[WM_WARPS][WM_K];
  const int lane = threadIdx.x & 31;
  const int w = threadIdx.x >> 5;
  int* M = Ms[w];
  long long* cnt = cnt_s[w];
  long long* idx = idx_s[w];
  const long long gw = (long long)blockIdx.x * WM_WARPS + w;
  const int nlev = WM_K - 1 - d0;   // materialised levels d0 .. K-2
  int* mybuf = buf + gw * (long long)(nlev > 0 ? nlev : 0) * buf_cap;
  const unsigned lt_mask = (1u << lane) - 1u;
  unsigned long long my_count = 0, steps = 0, tasks = 0;
  (void)out; (void)out_cap; (void)lt_mask;
  unsigned iter = 0;
  while (true) {
    if (wm_check_deadline(counters, deadline, lane)) break;
    long long item = pool_n;   // none, past the soft stop
    if (lane == 0 && wm_may_fetch(counters))
      item = (long long)atomicAdd(counters + WM_C_POOL, 1ull);
    item = __shfl_sync(WM_FULL, item, 0);
    if (item >= pool_n) break;
    if (lane < d0) M[lane] = pool[item * d0 + lane];
    __syncwarp();
    int level = d0;   // depth whose candidates are computed next
    while (true) {
      if ((++iter & 63u) == 0 && wm_check_deadline(counters, deadline, lane)) break;
#if WM_LIST
      if (*((volatile unsigned long long*)(counters + WM_C_OVERFLOW))) break;
#endif
      int gen, len, skip;
      long long start;
      wm_row_gen(level, M, gen, start, len, skip);
      int* lb = mybuf + (long long)(level - d0) * buf_cap;
      long long n = 0;
      for (long long b = 0; b < len; b += 32) {
        const long long off = b + lane;
        int c = -1;
        const bool valid = off < len && wm_row_task(level, M, gen, start + off, c);
#if WM_PROFILE
        if (lane == 0) { steps += 1; tasks += (unsigned long long)wm_min<long long>(32, len - b); }
#endif
        const unsigned vm = __ballot_sync(WM_FULL, valid);
        if (level == WM_K - 1) {
#if WM_LIST
          int row[WM_K];
#pragma unroll
          for (int i = 0; i < WM_K - 1; ++i) row[i] = M[i];
          row[WM_K - 1] = c;
          wm_emit_rows(valid, row, counters, out, out_cap, lane);
#else
          my_count += valid ? 1 : 0;
#endif
        } else {
          if (valid) lb[n + __popc(vm & lt_mask)] = c;
          n += __popc(vm);
        }
      }
      __syncwarp();
      if (level < WM_K - 1) {
        if (lane == 0) { cnt[level] = n; idx[level] = 0; }
      } else {
        --level;
      }
      __syncwarp();
      // next candidate of the deepest level with any left (backtracking)
      while (level >= d0 && idx[level] >= cnt[level]) --level;
      if (level < d0) break;
      __syncwarp();
      if (lane == 0) {
        M[level] = mybuf[(long long)(level - d0) * buf_cap + idx[level]];
        idx[level] += 1;
      }
      __syncwarp();
      ++level;
    }
    if (wm_stopped(counters)) break;
  }
  my_count = wm_warp_sum(my_count);
  if (lane == 0) {
    if (my_count) atomicAdd(counters + WM_C_COUNT, my_count);
#if WM_PROFILE
    atomicAdd(counters + WM_C_STEPS, steps);
    atomicAdd(counters + WM_C_TASKS, tasks);
#endif
  }
  (void)steps; (void)tasks;
}
