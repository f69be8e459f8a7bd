// warpmatch GPU delta engine: the kernels that keep device copies of the storage current
// (the DCSR cache of the random-walk and degree policies, the vertex maps, the device
// mirror of policy "device"). Appended to kernels/delta.cu in one NVRTC module
// (stream/gpu/_modules.py _source), so they share its #defines and warp.cuh; they read
// none of the matching kernel's helpers. One warp per row throughout.

// Gather the storage rows of `rows` into a DCSR cache (the random-walk and degree
// policies): row i, of deg[rows[i]] entries, goes to dst[c_off[i] ..], a slot of
// c_off[i+1] - c_off[i] >= deg entries (cache.row_capacity). A row the previous
// cache holds (prev != 0 and old_slot[rows[i]] >= 0: wm_refresh_rows has kept it
// current) is copied from it, old_src[old_off[slot] ..], in device memory; any
// other from src[start[rows[i]] ..], the host storage mapped into the device
// (zero-copy), adding its entries to *host_read. One warp per row.
extern "C" __global__ void wm_gather_rows(const int* __restrict__ rows, long long nrows,
                                          const long long* __restrict__ start,
                                          const int* __restrict__ deg,
                                          const long long* __restrict__ c_off,
                                          const int* __restrict__ src, int* __restrict__ dst,
                                          const int* __restrict__ old_slot,
                                          const long long* __restrict__ old_off,
                                          const int* __restrict__ old_src, int prev,
                                          unsigned long long* host_read) {
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
  unsigned long long from_host = 0;
  for (long long i = blockIdx.x * (long long)(blockDim.x >> 5) + (threadIdx.x >> 5); i < nrows;
       i += warps) {
    const int r = rows[i];
    const long long a = c_off[i], len = deg[r];
    const int os = prev ? old_slot[r] : -1;
    const int* from = os >= 0 ? old_src : src;
    const long long s = os >= 0 ? old_off[os] : start[r];
    if (os < 0) from_host += len;
    for (long long q = lane; q < len; q += 32) dst[a + q] = from[s + q];
  }
  if (lane == 0 && from_host) atomicAdd(host_read, from_host);
}

// Keep a cache current after a batch was applied: each row rows[i] the batch
// rewrote (moved or changed in the host storage) that has a slot is copied again
// from the storage at its new place (start, deg: the refreshed row index) into its
// slot when it fits the slot's capacity, c_off[s+1] - c_off[s]; otherwise the
// vertex leaves the cache, its slots in both directions dropped (slot_other: the
// other direction's map, or slot itself), and its rows are read from host memory
// until the next gather. counts[0] += entries read from host memory, counts[1] +=
// vertices dropped. The labels (lab_src, lab_dst) are copied alongside when the
// graph has edge labels (lab_dst non-null). One warp per row.
extern "C" __global__ void wm_refresh_rows(const int* __restrict__ rows, long long nrows,
                                           int* slot, int* slot_other,
                                           const long long* __restrict__ c_off,
                                           const long long* __restrict__ start,
                                           const int* __restrict__ deg,
                                           const int* __restrict__ src, int* __restrict__ dst,
                                           const int* __restrict__ lab_src,
                                           int* __restrict__ lab_dst,
                                           unsigned long long* counts) {
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
  unsigned long long read = 0, dropped = 0;
  for (long long i = blockIdx.x * (long long)(blockDim.x >> 5) + (threadIdx.x >> 5); i < nrows;
       i += warps) {
    const int r = rows[i];
    const int s = slot[r];
    if (s < 0) continue;
    const long long a = c_off[s], len = deg[r];
    if (len > c_off[s + 1] - a) {
      __syncwarp();
      if (lane == 0) { slot[r] = -1; slot_other[r] = -1; }
      dropped += 1;
      continue;
    }
    const long long b = start[r];
    for (long long q = lane; q < len; q += 32) dst[a + q] = src[b + q];
    if (lab_dst)
      for (long long q = lane; q < len; q += 32) lab_dst[a + q] = lab_src[b + q];
    read += len * (lab_dst ? 2 : 1);
  }
  if (lane == 0 && read) atomicAdd(counts, read);
  if (lane == 0 && dropped) atomicAdd(counts + 1, dropped);
}

// A batch's changes to the vertex maps of one direction, in one launch: the
// overlay map (o_idx[x] = -1 for the previous batch's touched rows old_t that
// this batch does not touch, o_idx[t[i]] = v[i] for this batch's; t is sorted)
// and the row index (start, deg of the rows the last batch rewrote).
extern "C" __global__ void wm_batch_maps(const int* __restrict__ old_t, long long n_old,
                                         const int* __restrict__ t,
                                         const int* __restrict__ v, long long n_t,
                                         int* __restrict__ o_idx,
                                         const int* __restrict__ rows,
                                         const long long* __restrict__ r_start,
                                         const int* __restrict__ r_deg, long long n_rows,
                                         long long* __restrict__ start,
                                         int* __restrict__ deg) {
  const long long total = n_old + n_t + n_rows;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    if (i < n_old) {
      const int x = old_t[i];
      long long lo = 0, hi = n_t;       // is x touched again? (then its entry is set below)
      while (lo < hi) {
        const long long mid = (lo + hi) >> 1;
        if (t[mid] < x) lo = mid + 1; else hi = mid;
      }
      if (lo == n_t || t[lo] != x) o_idx[x] = -1;
    } else if (i < n_old + n_t) {
      o_idx[t[i - n_old]] = v[i - n_old];
    } else {
      const long long j = i - n_old - n_t;
      start[rows[j]] = r_start[j];
      deg[rows[j]] = r_deg[j];
    }
  }
}

// Refresh rows of the device mirror of the storage (policy "device"): row rows[i]
// is copied from the host storage (mapped, zero-copy) at its place in the row
// index, src[start[r] .. start[r] + deg[r]), to the same place in dst. One warp per row.
extern "C" __global__ void wm_copy_rows(const int* __restrict__ rows, long long nrows,
                                        const long long* __restrict__ start,
                                        const int* __restrict__ deg,
                                        const int* __restrict__ src, int* __restrict__ dst) {
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
  for (long long i = blockIdx.x * (long long)(blockDim.x >> 5) + (threadIdx.x >> 5); i < nrows;
       i += warps) {
    const int r = rows[i];
    const long long a = start[r], b = a + deg[r];
    for (long long q = a + lane; q < b; q += 32) dst[q] = src[q];
  }
}
