// warpmatch: warp-level helpers shared by the static kernels (common.cuh, fine.cu,
// coarse.cu) and the delta kernel (stream/gpu/kernels/delta.cu). Prepended to both
// sources by the engines; NVRTC, no host headers.
#ifndef WM_WARP_CUH
#define WM_WARP_CUH

#define WM_FULL 0xffffffffu

template <class T>
__device__ __forceinline__ T wm_min(T a, T b) { return a < b ? a : b; }
template <class T>
__device__ __forceinline__ T wm_max(T a, T b) { return a > b ? a : b; }

__device__ __forceinline__ unsigned long long wm_warp_sum(unsigned long long x) {
  for (int s = 16; s > 0; s >>= 1) x += __shfl_down_sync(WM_FULL, x, s);
  return x;
}

// gMatch 4.2's virtual task pool of one stack level, one step. The level holds n
// entries (partial matches) whose candidate lists have lengths len[0..n); the pool is
// the concatenation of the lists, walked with two pointers: p, the first entry not
// finished, and o, the candidates of entry p already handed out. The step hands the
// next (at most) 32 pool positions to the lanes: lane i < the returned count gets
// entry e and candidate offset off. With all_lanes false only entry p is considered
// (one task group at a time: the kernels' "naive" variant). owner is 32 bytes of the
// warp's shared scratch. Lane 0 stores the advanced pointers in *wp and *wo (shared
// memory); every lane has read p and o before that.
__device__ __forceinline__ int wm_hand_out(const int* len, int p, int o, int n, int* wp,
                                           int* wo, unsigned char* owner, bool all_lanes,
                                           int lane, int& e, int& off) {
  const int j = p + lane;
  const bool considered = (all_lanes || lane == 0) && j < n;
  const int rem = considered ? len[j] - (lane == 0 ? o : 0) : 0;
  const int r = wm_min(rem, 32);
  int incl = r;
  for (int s = 1; s < 32; s <<= 1) {
    const int t = __shfl_up_sync(WM_FULL, incl, s);
    if (lane >= s) incl += t;
  }
  const int excl = incl - r;
  const int total = __shfl_sync(WM_FULL, incl, 31);
  // the lane whose entry starts at pool position excl (of this step) owns it
  const bool owner_lane = r > 0 && excl < 32;
  if (owner_lane) owner[excl] = (unsigned char)lane;
  const unsigned starts = __reduce_or_sync(WM_FULL, owner_lane ? (1u << excl) : 0u);
  // entries this step finishes; the first one that it does not keeps the cursor
  const bool consumed = considered && excl <= 32 && rem <= 32 - excl;
  const unsigned cm = __ballot_sync(WM_FULL, consumed);
  int F = __ffs(~cm) - 1;
  if (cm == WM_FULL) F = 32;
  // candidates this step takes from an entry that it does not finish
  const int taken = considered ? wm_max(0, 32 - excl) : 0;
  const int takenF = __shfl_sync(WM_FULL, taken, F & 31);
  __syncwarp();
  const int ntask = wm_min(total, 32);
  e = 0;
  off = 0;
  if (lane < ntask) {
    const unsigned below = starts & (lane == 31 ? WM_FULL : ((2u << lane) - 1u));
    const int s = 31 - __clz(below);
    const int ol = owner[s];
    e = p + ol;
    off = lane - s + (ol == 0 ? o : 0);
  }
  __syncwarp();
  if (lane == 0) {
    *wp = p + F;
    *wo = F < 32 ? (F == 0 ? o : 0) + takenF : 0;
  }
  return ntask;
}

#endif  // WM_WARP_CUH
