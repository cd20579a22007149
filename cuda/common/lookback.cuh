/* Decoupled look-back (Merrill & Garland; cuSZp's tile offsets): the exclusive prefix of N
 * per-tile 64-bit counts in one pass over the tiles, each tile waiting only on its predecessors.
 *
 * A status word holds 2 flag bits above a 62-bit value, so flag and value change in one store.
 * Tile numbers must come from an atomic ticket in launch order (not blockIdx): a tile then only
 * ever waits on tiles that are already running, so the scan cannot deadlock. The status arrays
 * are zero (LB_INVALID) before the kernel starts. */
#ifndef H5ZGPU_LOOKBACK_CUH
#define H5ZGPU_LOOKBACK_CUH

#include "device.cuh"

#define LB_SHIFT 62
#define LB_VALUE_MASK ((1ull << LB_SHIFT) - 1)
#define LB_INVALID 0ull
#define LB_AGGREGATE 1ull   /* value is the tile's own count */
#define LB_INCLUSIVE 2ull   /* value is the sum over this tile and all before it */

__device__ __forceinline__ void lb_store(unsigned long long *p, unsigned long long flag,
                                         uint64_t value)
{
    *(volatile unsigned long long *)p = (flag << LB_SHIFT) | (value & LB_VALUE_MASK);
}

__device__ __forceinline__ unsigned long long lb_load(const unsigned long long *p)
{
    return *(const volatile unsigned long long *)p;
}

/* Called by all 32 lanes of one warp with the same tile, status[] and agg[]. Publishes the
 * tile's counts, returns their exclusive prefixes in excl[] (on every lane), then publishes
 * the inclusive ones. With N > 1 the N arrays are read together: a predecessor counts as
 * ready only when its N flags agree, since it writes them one after the other. */
template <int N>
__device__ void lb_exclusive(unsigned long long *const *status, uint64_t tile, const uint64_t *agg,
                             uint64_t *excl)
{
    const unsigned lane = threadIdx.x & 31u;
    for (int i = 0; i < N; i++)
        excl[i] = 0;
    if (tile == 0) {
        if (lane == 0)
            for (int i = 0; i < N; i++)
                lb_store(&status[i][0], LB_INCLUSIVE, agg[i]);
        return;
    }
    if (lane == 0)
        for (int i = 0; i < N; i++)
            lb_store(&status[i][tile], LB_AGGREGATE, agg[i]);

    int64_t top = (int64_t)tile - 1;   /* the window is tiles top-31 .. top, lane 0 nearest */
    for (;;) {
        int64_t idx = top - (int64_t)lane;
        unsigned long long flag = LB_INCLUSIVE;
        uint64_t val[N];
        for (int i = 0; i < N; i++)
            val[i] = 0;
        if (idx >= 0) {
            for (;;) {
                unsigned long long w0 = lb_load(&status[0][idx]);
                flag = w0 >> LB_SHIFT;
                val[0] = w0 & LB_VALUE_MASK;
                for (int i = 1; i < N; i++) {
                    unsigned long long w = lb_load(&status[i][idx]);
                    if ((w >> LB_SHIFT) != flag)
                        flag = LB_INVALID;
                    val[i] = w & LB_VALUE_MASK;
                }
                if (flag != LB_INVALID)
                    break;
                __nanosleep(20);
            }
        }
        unsigned inc = __ballot_sync(FULL, flag == LB_INCLUSIVE);
        unsigned stop = inc ? (unsigned)__ffs(inc) - 1u : 31u;   /* nearest inclusive tile */
        for (int i = 0; i < N; i++)
            excl[i] += dv_warp_sum(lane <= stop ? val[i] : 0);
        if (inc)
            break;
        top -= 32;
    }
    if (lane == 0)
        for (int i = 0; i < N; i++)
            lb_store(&status[i][tile], LB_INCLUSIVE, excl[i] + agg[i]);
}

#endif
