// warpmatch GPU engine: gMatch's fine-grained execution model (sections 4-5).
//
// Each lane runs one fine-grained task: may candidate c extend partial match M?
// (wm_stack_task, generated per plan). A warp keeps, per level, up to 32
// partial matches in its shared-memory stack; the level's virtual task pool is
// the concatenation of their local candidate lists, walked with two pointers
// (entry, offset). Each step hands the next 32 tasks of the pool to the 32
// lanes, across task-group boundaries when WM_BATCH (warp-level batch
// exploration, 4.2); survivors are compacted with a ballot into the next level
// and the warp descends. Partial matches are rebuilt from parent indices, so
// the stack holds O(K * 32) entries and no buffer depends on the degree.
//
// Two count-saving departures from the paper, both decided per plan (render.py):
// a depth's candidate list is cut by binary search to the range its symmetry
// restrictions allow (WM_TRIM; the stack keeps the cut's offset per entry), so
// tasks those restrictions reject are never handed out; and in count mode a last
// vertex that is a plain leaf is counted per partial match at depth K-2
// (WM_LEAF: list length minus the matched vertices in it) instead of one lane per
// candidate, as is a group of bare leaves at depths WM_LEAF_D..K-1 per partial match
// of depth WM_LEAF_D - 1 (from their lists' sizes and intersections), or twins or
// independent vertices there (WM_WARP_GROUP: the whole warp intersects their lists for one
// partial match after another, wm_warp_group).
//
// Work distribution (4.3): warps take chunks of the initial task pool (filled
// by the BFS phase, bfs.cu) through an atomic counter. With WM_STEAL, a warp
// that finds the pool empty registers as idle; busy warps check for idle ones
// every 16 steps and donate half of the remaining tasks of their shallowest
// level with any left (whole entries, or half of a single entry's offset range)
// as records (prefix, level, [lo, hi)) in a global ticket queue (wm_donate).
// This is gMatch's "split the stack in half" with one global queue in place of
// per-block queues.
//
// List mode writes full matches (depth order) to `out` at an atomic cursor; if
// a slice of the pool produces more than out_cap rows, the overflow flag stops
// every warp and the host re-runs that slice smaller (run.py).

struct WmSteal {     // global state of the stealing protocol (ints)
  int busy;          // warps holding work
  int head;          // tickets taken by idle warps
  int tail;          // records reserved by donors
  int spare;
};

#define WM_REC (WM_K + 3)   // record: prefix[K], level, lo, hi

__device__ __forceinline__ void wm_load_pool(WmStack& S, const int* __restrict__ pool,
                                             long long first, int got, int d0, int lane) {
  if (lane < got) {
    const int* r = pool + (first + lane) * d0;
    for (int l = 0; l < d0; ++l) {
      S.v[l][lane] = r[l];
      S.p[l][lane] = (unsigned char)lane;
    }
    int gn, ln, sk;
    long long st;
    wm_row_gen(d0, r, gn, st, ln, sk);
    S.gen[d0 - 1][lane] = (unsigned char)gn;
    S.len[d0 - 1][lane] = ln;
#if WM_TRIM
    S.sk[d0 - 1][lane] = sk;
#endif
  }
  if (lane == 0) {
    S.wp[d0 - 1] = 0;
    S.wo[d0 - 1] = 0;
    S.wn[d0 - 1] = got;
  }
  __syncwarp();
}

#if WM_STEAL
// Work stealing as a ticket queue: an idle warp takes a ticket (head++) and
// waits for the record of its ticket; a busy warp that sees tickets waiting
// (head > tail) donates records for tickets tail.. (reserved with a CAS among the
// few donors) and counts the receivers as busy before publishing, so "busy == 0
// and no record for my ticket" means the search is over. One atomic per idle
// warp, no retry storms on a shared word.
//
// The records form a ring of rec_cap slots: ticket T uses slot T % rec_cap, and
// recflag[slot] is T + 1 once T's record is published, -(T + 1) once its
// receiver has loaded it. A donor writing ticket T >= rec_cap waits for ticket
// T - rec_cap to be loaded (at most `warps` tickets are outstanding and rec_cap
// is 8x that, so it waits only on a receiver that is slow to load a record
// published rec_cap tickets earlier; how often that happens is not measured).
// An earlier version used every
// slot once: after rec_cap donations stealing stopped for the rest of the
// launch, and on a 10^8-edge power-law graph the hubs' subtrees ran on single
// warps (4-clique 9.5 s, every run at exactly rec_cap steals).
__device__ void wm_donate(WmStack& S, int base, int level, int lane, WmSteal* st,
                          int* __restrict__ rec, int* __restrict__ recflag, int rec_cap,
                          const unsigned long long* counters) {
  int l = base, kind = 0, mid = 0;
  for (; l <= level; ++l) {
    if (l > WM_K - 3 && l != base) break;   // only donate subtrees, not single checks
    const int p = S.wp[l], o = S.wo[l], n = S.wn[l];
    if (n - p >= 2) { kind = 1; mid = p + (n - p + 1) / 2; break; }
    if (n - p == 1 && S.len[l][p] - o >= 2) { kind = 2; mid = o + (S.len[l][p] - o) / 2; break; }
  }
  if (!kind) return;
  const int n = S.wn[l];
  int want = kind == 1 ? n - mid : 1;
  int slot = 0;
  if (lane == 0) {
    volatile int* vt = &st->tail;
    volatile int* vh = &st->head;
    // one attempt: a donor that loses the race to another donor goes back to its
    // own work (and may donate 16 steps later) instead of retrying on the word that
    // every busy warp races for. With retries, a 10^8-edge power-law graph ran
    // 2-5x slower (4-clique 1.37 s against 0.76 s, H100).
    const int t = *vt;
    want = wm_min(want, wm_min(*vh - t, rec_cap));
    if (want <= 0 || atomicCAS(&st->tail, t, t + want) != t) want = 0;
    slot = t;
    if (want) atomicAdd(&st->busy, want);   // the receivers hold work from now on
  }
  want = __shfl_sync(WM_FULL, want, 0);
  slot = __shfl_sync(WM_FULL, slot, 0);
  if (want == 0) return;
  if (lane < want) {
    // kind 1: entries [n - want, n); kind 2: offsets [mid, len) of the one entry
    const int e = kind == 1 ? n - want + lane : S.wp[l];
    const int ticket = slot + lane;
    const int ring = ticket % rec_cap;
    if (ticket >= rec_cap) {
      // the slot's previous ticket must have been loaded (or the search stopped)
      volatile int* vf = recflag + ring;
      volatile const unsigned long long* vc = counters;
      while (*vf != -(ticket - rec_cap + 1) && !vc[WM_C_OVERFLOW] && !vc[WM_C_ABORT])
        __nanosleep(128);
    }
    int* r = rec + (long long)ring * WM_REC;
    int i = e;
    for (int j = l; j >= 0; --j) {
      r[j] = S.v[j][i];
      i = S.p[j][i];
    }
    r[WM_K] = l;
    r[WM_K + 1] = kind == 1 ? 0 : mid;
    r[WM_K + 2] = S.len[l][e];
    __threadfence();
    atomicExch(recflag + ring, ticket + 1);
  }
  __syncwarp();
  if (lane == 0) {
    if (kind == 1) S.wn[l] = n - want; else S.len[l][S.wp[l]] = mid;
  }
  __syncwarp();
}

// Take a ticket and wait for its record or for global termination.
// Returns the ticket (its record is in slot ticket % rec_cap), or -1.
__device__ int wm_wait(WmSteal* st, int* __restrict__ recflag,
                       unsigned long long* counters, unsigned long long deadline, int lane,
                       int rec_cap) {
  int slot = -1;
  if (lane == 0) {
    atomicSub(&st->busy, 1);
    const int T = atomicAdd(&st->head, 1);
    volatile int* vb = &st->busy;
    volatile int* vt = &st->tail;
    volatile int* vf = recflag + T % rec_cap;
    volatile unsigned long long* vc = counters;
    unsigned nap = 256;   // back off: idle warps polling slow the busy ones
    while (true) {
      if (*vf == T + 1) { slot = T; break; }
      if (deadline && wm_now() > deadline) atomicExch(counters + WM_C_ABORT, 1ull);
      if (vc[WM_C_OVERFLOW] || vc[WM_C_ABORT]) break;
      if (*vb == 0) {
        __threadfence();
        if (*vf == T + 1) { slot = T; break; }
        if (*vt <= T) break;     // nobody holds work and no record is coming
      }
      __nanosleep(nap);
      if (nap < 32768) nap <<= 1;
    }
    if (slot >= 0) {
      __threadfence();
      atomicAdd(counters + WM_C_STEALS, 1ull);
    }
  }
  return __shfl_sync(WM_FULL, slot, 0);
}

// Load the record of `ticket` as a single entry at levels 0..L and free its slot;
// returns L.
__device__ __forceinline__ int wm_load_record(WmStack& S, const int* rec,
                                              int* __restrict__ recflag, int rec_cap,
                                              int ticket, int lane) {
  int L = 0;
  if (lane == 0) {
    // volatile: the slot is reused, so no cached copy of an older record may be read
    const volatile int* vr = rec + (long long)(ticket % rec_cap) * WM_REC;
    int r[WM_REC];
#pragma unroll
    for (int j = 0; j < WM_REC; ++j) r[j] = vr[j];
    L = r[WM_K];
    for (int j = 0; j <= L; ++j) { S.v[j][0] = r[j]; S.p[j][0] = 0; }
    int gn, ln, sk;
    long long st;
    // the donor's list, rebuilt from the prefix (its offsets lo, hi are relative
    // to the restriction range, which the prefix determines)
    wm_row_gen(L + 1, r, gn, st, ln, sk);
    S.gen[L][0] = (unsigned char)gn;
    S.len[L][0] = r[WM_K + 2];
#if WM_TRIM
    S.sk[L][0] = sk;
#endif
    S.wp[L] = 0;
    S.wo[L] = r[WM_K + 1];
    S.wn[L] = 1;
    __threadfence();
    atomicExch(recflag + ticket % rec_cap, -(ticket + 1));   // the slot may be reused
  }
  L = __shfl_sync(WM_FULL, L, 0);
  __syncwarp();
  return L;
}
#endif

extern "C" __global__ void __launch_bounds__(WM_WARPS * 32)
wm_fine(const int* __restrict__ pool, long long pool_n, int d0, int fetch,
        unsigned long long* counters, int* __restrict__ out, long long out_cap,
        int* steal_state, int* __restrict__ rec, int* __restrict__ recflag, int rec_cap,
        unsigned long long deadline) {
  __shared__ WmStack stacks[WM_WARPS];
  const int lane = threadIdx.x & 31;
  WmStack& S = stacks[threadIdx.x >> 5];
  const unsigned lt_mask = (1u << lane) - 1u;
  unsigned long long my_count = 0, steps = 0, tasks = 0;
  (void)out; (void)out_cap; (void)steal_state; (void)rec; (void)recflag; (void)rec_cap;
#if WM_STEAL
  WmSteal* st = reinterpret_cast<WmSteal*>(steal_state);
  if (lane == 0) atomicAdd(&st->busy, 1);
#endif
  unsigned iter = 0;
  int level = -1, base = 0;
  while (true) {
    if (level < base) {
      // out of work: next chunk of the initial task pool
      long long first = 0;
      int got = 0;
      if (lane == 0 && wm_may_fetch(counters)) {
        const unsigned long long f = atomicAdd(counters + WM_C_POOL, (unsigned long long)fetch);
        if ((long long)f < pool_n) {
          first = (long long)f;
          got = (int)wm_min<long long>(fetch, pool_n - first);
        }
      }
      got = __shfl_sync(WM_FULL, got, 0);
      first = __shfl_sync(WM_FULL, first, 0);
      if (got > 0) {
        wm_load_pool(S, pool, first, got, d0, lane);
        level = base = d0 - 1;
        continue;
      }
#if WM_STEAL
      const int slot = wm_wait(st, recflag, counters, deadline, lane, rec_cap);
      if (slot >= 0 && wm_stopped(counters)) break;
      if (slot < 0) break;
      level = base = wm_load_record(S, rec, recflag, rec_cap, slot, lane);
      continue;
#else
      break;
#endif
    }
    if ((++iter & 63u) == 0 && wm_check_deadline(counters, deadline, lane)) break;
#if WM_LIST
    if (*((volatile unsigned long long*)(counters + WM_C_OVERFLOW))) break;
#endif
#if WM_STEAL
    if ((iter & 15u) == 0) {
      int give = 0;
      if (lane == 0) {
        const int t = *((volatile int*)&st->tail);
        give = *((volatile int*)&st->head) > t;   // tickets are waiting
      }
      if (__shfl_sync(WM_FULL, give, 0))
        wm_donate(S, base, level, lane, st, rec, recflag, rec_cap, counters);
    }
#endif
    const int p = S.wp[level], o = S.wo[level], n = S.wn[level];
    if (p >= n) { --level; continue; }

    // ---- hand the next 32 tasks of this level's virtual task pool to the lanes
    int e, off;
    const int ntask = wm_hand_out(S.len[level], p, o, n, &S.wp[level], &S.wo[level], S.owner,
                                  WM_BATCH, lane, e, off);
    const bool has = lane < ntask;
#if WM_PROFILE
    if (lane == 0) { steps += 1; tasks += (unsigned long long)ntask; }
#endif
    const int d = level + 1;
    int c = -1, ngen = 0, nlen = 0, nskip = 0;
    unsigned long long ncnt = 0;
    int row[WM_K];
    const bool valid = has && wm_stack_task(d, S, e, off, c, ngen, nlen, nskip, ncnt, row);
#if WM_LEAF
    if (d == WM_LEAF_D - 1) {
#if WM_WARP_GROUP
      // twins or independent vertices: each valid lane's partial match (in its row) in
      // turn, the whole warp intersecting their lists for it (wm_warp_group,
      // render_leaves.render_twins, render_indep)
      unsigned todo = __ballot_sync(WM_FULL, valid);
      while (todo) {
        const int src = __ffs(todo) - 1;
        todo &= todo - 1;
#ifdef WM_GENERIC
        int r[WM_K];                      // WM_LEAF_D is read from the plan's table
#else
        int r[WM_LEAF_D];
#endif
#pragma unroll
        for (int j = 0; j < WM_LEAF_D; ++j) r[j] = __shfl_sync(WM_FULL, row[j], src);
        const unsigned long long n = wm_warp_group(r, lane);
        if (lane == 0) my_count += n;
      }
#else
      my_count += valid ? ncnt : 0ull;   // ncnt: c's completions (wm_leaf_count)
#endif
      __syncwarp();
      continue;
    }
#endif
    if (d == WM_K - 1) {
#if WM_LIST
      wm_emit_rows(valid, row, counters, out, out_cap, lane);
#else
      my_count += valid ? 1 : 0;
#endif
      __syncwarp();
      continue;
    }
    // ---- compact the survivors into the next level and descend (gMatch 5.1)
    const unsigned vm = __ballot_sync(WM_FULL, valid);
    if (vm) {
      if (valid) {
        const int idx = __popc(vm & lt_mask);
        S.v[d][idx] = c;
        S.p[d][idx] = (unsigned char)(e);
        S.gen[d][idx] = (unsigned char)ngen;
        S.len[d][idx] = nlen;
#if WM_TRIM
        S.sk[d][idx] = nskip;
#endif
      }
      if (lane == 0) {
        S.wp[d] = 0;
        S.wo[d] = 0;
        S.wn[d] = __popc(vm);
      }
      level = d;
    }
    __syncwarp();
  }
  // leaving with work happens only on list overflow or the deadline; the host
  // then discards (overflow) or reports (deadline) the launch
  my_count = wm_warp_sum(my_count);
  if (lane == 0) {
    if (my_count) atomicAdd(counters + WM_C_COUNT, my_count);
#if WM_PROFILE
    atomicAdd(counters + WM_C_STEPS, steps);
    atomicAdd(counters + WM_C_TASKS, tasks);
#endif
  }
  (void)lt_mask; (void)steps; (void)tasks;
}
