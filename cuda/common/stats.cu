/* The statistics that set a chunk's quantiser and its census (qz_stats_cpu on the device), for
 * both codecs: a grid-stride min/max over the values, one partial a CTA, then one CTA merges
 * them; the census's counts go to the counters with one atomic a CTA. */
#include "device.cuh"
#include "stages.h"

#include <type_traits>

#include "quant.h"

#define HZC_STATS_THREADS 256
#define HZC_STATS_WARPS (HZC_STATS_THREADS / 32)

__device__ __forceinline__ void mm_merge(hzc_minmax *a, double lo, double hi)
{
    a->lo = lo < a->lo ? lo : a->lo;
    a->hi = hi > a->hi ? hi : a->hi;
}

__device__ __forceinline__ void mm_warp(hzc_minmax *m)
{
    for (int d = 16; d > 0; d >>= 1)
        mm_merge(m, __shfl_xor_sync(FULL, m->lo, d), __shfl_xor_sync(FULL, m->hi, d));
}

__device__ __forceinline__ void mm_block(hzc_minmax *m)
{
    __shared__ hzc_minmax w_s[HZC_STATS_WARPS];
    mm_warp(m);
    if ((threadIdx.x & 31u) == 0)
        w_s[threadIdx.x >> 5] = *m;
    __syncthreads();
    if (threadIdx.x < 32) {
        if (threadIdx.x < HZC_STATS_WARPS)
            *m = w_s[threadIdx.x];
        mm_warp(m);
    }
}

/* One thread's census (qz_census): elements of the declared fill value, NaN of other bits, and
 * the first of those as ~index (the largest key is the first; 0: none). */
struct stats_census {
    unsigned long long fill, nan, key;
};

/* A value into the range [lo, hi] and the census: fill elements and non-finite ones (and
 * PWREL's zeros) left out of the range. Compared in the element type, which orders as its
 * double does. */
template <typename T, bool PWREL>
__device__ __forceinline__ void stats_take(T x, uint64_t i, int has_fill, uint64_t fill_bits,
                                           T &lo, T &hi, stats_census &c)
{
    if (has_fill && dv_bits(x) == fill_bits) {
        c.fill++;
        return;
    }
    if (x != x) {
        /* a thread meets its elements in increasing order: its first NaN is its smallest */
        c.key = c.nan++ == 0 ? ~(unsigned long long)i : c.key;
        return;
    }
    if (!isfinite(x) || (PWREL && x == (T)0))
        return;
    if (PWREL)
        x = x < 0 ? -x : x;
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
}

/* qz_stats_cpu's reduction, 16 bytes a load where the input is 16-byte aligned (the order of
 * the comparisons does not matter: a signed zero as the range's end leaves qz_init's
 * base 0). PWREL: qz_log2lin is monotone, so the smallest L(|x|) is L of the smallest non-zero
 * |x|, taken once in the final kernel. */
/* The CTA's census into the counters: one atomic each where the CTA counted any. */
__device__ __forceinline__ void census_block(const stats_census &c, hzc_scalars *sc)
{
    __shared__ unsigned long long fill_s, nan_s, key_s;
    if (threadIdx.x == 0)
        fill_s = nan_s = key_s = 0;
    __syncthreads();
    if (c.fill)
        atomicAdd(&fill_s, c.fill);
    if (c.nan) {
        atomicAdd(&nan_s, c.nan);
        atomicMax(&key_s, c.key);
    }
    __syncthreads();
    if (threadIdx.x == 0 && fill_s)
        atomicAdd(&sc->fill_count, fill_s);
    if (threadIdx.x == 0 && nan_s) {
        atomicAdd(&sc->nan_count, nan_s);
        atomicMax(&sc->nan_key, key_s);
    }
}

/* A chunk a row of the grid (blockIdx.y): its values at in, or ins[row] when ins is given. */
template <typename T, bool PWREL>
__global__ void __launch_bounds__(HZC_STATS_THREADS)
    qz_stats_kernel(const T *in, const void *const *ins, uint64_t n, int has_fill,
                    uint64_t fill_bits, hzc_minmax *partial, hzc_scalars *sc)
{
    if (ins)
        in = (const T *)ins[blockIdx.y];
    partial += (uint64_t)blockIdx.y * gridDim.x;
    sc += blockIdx.y;
    using V = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
    constexpr unsigned per = sizeof(V) / sizeof(T);
    T lo = (T)HUGE_VAL, hi = (T)-HUGE_VAL;
    stats_census c = {0, 0, 0};
    const uint64_t first = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t nv = ((uintptr_t)in & (sizeof(V) - 1)) == 0 ? n / per : 0;
#pragma unroll 2
    for (uint64_t j = first; j < nv; j += stride) {
        const V v = ((const V *)in)[j];
        const T *x = (const T *)&v;
#pragma unroll
        for (unsigned k = 0; k < per; k++)
            stats_take<T, PWREL>(x[k], j * per + k, has_fill, fill_bits, lo, hi, c);
    }
    for (uint64_t i = nv * per + first; i < n; i += stride)
        stats_take<T, PWREL>(in[i], i, has_fill, fill_bits, lo, hi, c);
    census_block(c, sc);
    hzc_minmax m = {(double)lo, (double)hi};
    mm_block(&m);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = m;
}

/* A chunk a CTA. */
template <typename T, bool PWREL>
__global__ void __launch_bounds__(HZC_STATS_THREADS)
    qz_stats_final_kernel(const T *in, const void *const *ins, const hzc_minmax *partial,
                          unsigned np, hzc_scalars *sc)
{
    if (ins)
        in = (const T *)ins[blockIdx.x];
    partial += (uint64_t)blockIdx.x * np;
    sc += blockIdx.x;
    if (threadIdx.x == 0 && sc->nan_count)
        sc->nan_bits = dv_bits(in[~sc->nan_key]);
    hzc_minmax m = {HUGE_VAL, -HUGE_VAL};
    for (unsigned i = threadIdx.x; i < np; i += blockDim.x)
        mm_merge(&m, partial[i].lo, partial[i].hi);
    mm_block(&m);
    if (threadIdx.x == 0) {
        sc->any = m.lo <= m.hi;
        sc->lo = !sc->any ? 0.0 : (PWREL ? qz_log2lin(m.lo) : m.lo);
        sc->hi = !sc->any ? 0.0 : (PWREL ? qz_log2lin(m.hi) : (m.hi == m.lo ? m.lo : m.hi));
    }
}

template <typename T, bool PWREL>
static void stats_as(const void *in, const void *const *ins, unsigned count, uint64_t n,
                     int has_fill, uint64_t fill_bits, hzc_minmax *partial, hzc_scalars *sc,
                     unsigned grid, cudaStream_t s)
{
    qz_stats_kernel<T, PWREL><<<dim3(grid, count), HZC_STATS_THREADS, 0, s>>>(
        (const T *)in, ins, n, has_fill, fill_bits, partial, sc);
    qz_stats_final_kernel<T, PWREL><<<count, HZC_STATS_THREADS, 0, s>>>((const T *)in, ins,
                                                                        partial, grid, sc);
}

/* The chunk at in, or the count chunks at ins[] (device memory, count > 0). */
static cudaError_t launch_stats(const void *in, const void *const *ins, unsigned count,
                                uint64_t n, int is_f32, int pwrel, int has_fill,
                                uint64_t fill_bits, hzc_minmax *partial, hzc_scalars *sc, int sms,
                                cudaStream_t s)
{
    /* the grid of one chunk, shared among the batch's chunks */
    unsigned grid = hzc_grid_for(n / 4, sms);
    if (grid > HZC_STATS_CTAS)
        grid = HZC_STATS_CTAS;
    grid = (grid + count - 1) / count;
    static void (*const table[2][2])(const void *, const void *const *, unsigned, uint64_t, int,
                                     uint64_t, hzc_minmax *, hzc_scalars *, unsigned,
                                     cudaStream_t) = {
        {stats_as<double, false>, stats_as<double, true>},
        {stats_as<float, false>, stats_as<float, true>}};
    table[is_f32 ? 1 : 0][pwrel ? 1 : 0](in, ins, count, n, has_fill, fill_bits, partial, sc,
                                         grid, s);
    return cudaGetLastError();
}

cudaError_t hzc_launch_stats(const void *in, uint64_t n, int is_f32, int pwrel, int has_fill,
                             uint64_t fill_bits, hzc_minmax *partial, hzc_scalars *sc, int sms,
                             cudaStream_t s)
{
    return launch_stats(in, NULL, 1, n, is_f32, pwrel, has_fill, fill_bits, partial, sc, sms, s);
}

cudaError_t hzc_launch_stats_batch(const void *const *ins, unsigned count, uint64_t n, int is_f32,
                                   int pwrel, int has_fill, uint64_t fill_bits,
                                   hzc_minmax *partial, hzc_scalars *sc, int sms, cudaStream_t s)
{
    return launch_stats(NULL, ins, count, n, is_f32, pwrel, has_fill, fill_bits, partial, sc, sms,
                        s);
}
