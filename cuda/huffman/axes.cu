/* The Huffman codec's axis order on the GPU (huff_axes.h): the writer's costs over the sampled
 * tiles, as huff_axes.c sums them, and the copies between the chunk and the coded array. */
#include "huff_device.cuh"

#include "huff_axes.h"

#define HF_AXES_THREADS 256

/* quantiser argument of element i, NaN for a fill element (arg_at of huff_axes.c) */
template <typename T>
__device__ __forceinline__ double hf_axes_arg(const qz_quant &Q, const T *in, uint64_t i)
{
    const T v = in[i];
    return qz_is_fill(&Q, dv_bits(v)) ? (double)NAN : qz_lin_arg(&Q, (double)v);
}

/* A CTA a sample run: its sampled tile's terms along each axis, summed into cost[0..2] and
 * their counts into cost[3..5]. */
template <typename T>
__global__ void __launch_bounds__(HF_AXES_THREADS)
    hf_axes_cost_kernel(const hf_geom g, const qz_quant Q, const T *in, unsigned long long *cost)
{
    const uint64_t t = hf_sample_tile(&g, blockIdx.x);
    if (t >= g.ntiles)
        return;
    hf_tile T_;
    hf_tile_at(&g, t, &T_);
    const unsigned e[3] = {T_.ez, T_.ey, T_.ex}, tn = T_.ez * T_.ey * T_.ex;
    const uint64_t stride[3] = {g.ny * g.nx, g.nx, 1};
    unsigned long long c[3] = {0, 0, 0}, n[3] = {0, 0, 0};
    for (unsigned k = threadIdx.x; k < tn; k += blockDim.x) {
        const unsigned x = k % T_.ex, y = k / T_.ex % T_.ey, z = k / T_.ex / T_.ey;
        const unsigned cc[3] = {z, y, x};
        const uint64_t i = ((T_.z0 + z) * g.ny + T_.y0 + y) * g.nx + T_.x0 + x;
        for (unsigned a = 0; a < 3; a++) {
            if (!(cc[a] & 1u) || cc[a] < 3 || cc[a] + 3 >= e[a])
                continue;
            const uint64_t s = stride[a];
            n[a]++;
            c[a] += hf_axes_term(hf_axes_arg(Q, in, i - 3 * s), hf_axes_arg(Q, in, i - s),
                                 hf_axes_arg(Q, in, i), hf_axes_arg(Q, in, i + s),
                                 hf_axes_arg(Q, in, i + 3 * s));
        }
    }
    for (unsigned a = 0; a < 3; a++) {
        const unsigned long long sc = dv_warp_sum(c[a]), sn = dv_warp_sum(n[a]);
        if ((threadIdx.x & 31u) == 0 && sn) {
            atomicAdd(&cost[a], sc);
            atomicAdd(&cost[3 + a], sn);
        }
    }
}

cudaError_t hf_axes_launch_cost(const hf_geom *g, const qz_quant *Q, const void *in,
                                unsigned long long *cost, cudaStream_t s)
{
    cudaError_t e = cudaMemsetAsync(cost, 0, 6 * sizeof *cost, s);
    const unsigned runs = (unsigned)hf_sample_runs(g);
    if (e != cudaSuccess || runs == 0)
        return e;
    if (Q->is_f32)
        hf_axes_cost_kernel<float>
            <<<runs, HF_AXES_THREADS, 0, s>>>(*g, *Q, (const float *)in, cost);
    else
        hf_axes_cost_kernel<double>
            <<<runs, HF_AXES_THREADS, 0, s>>>(*g, *Q, (const double *)in, cost);
    return cudaGetLastError();
}

/* Element k of the coded array (raster order) against the chunk's element it holds: gathered
 * into the coded array, or scattered back. Rows of the coded array are the inner loop, so one
 * side is read or written in whole sectors. */
template <typename T, bool GATHER>
__global__ void __launch_bounds__(HF_AXES_THREADS)
    hf_axes_copy_kernel(const hf_geom g, unsigned axes, const T *src, T *dst)
{
    unsigned a[3];
    hf_axes_of(axes, a);
    const uint64_t n[3] = {g.nz, g.ny, g.nx}, stride[3] = {g.ny * g.nx, g.nx, 1};
    const uint64_t cy = n[a[1]], cx = n[a[2]];
    const uint64_t s0 = stride[a[0]], s1 = stride[a[1]], s2 = stride[a[2]];
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < g.n;
         k += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t x = k % cx, r = k / cx, y = r % cy, z = r / cy;
        const uint64_t i = z * s0 + y * s1 + x * s2;
        if (GATHER)
            dst[k] = src[i];
        else
            dst[i] = src[k];
    }
}

cudaError_t hf_axes_launch_copy(const hf_geom *g, unsigned axes, int is_f32, int gather,
                                const void *src, void *dst, int sms, cudaStream_t s)
{
    const unsigned grid = hf_grid(sms) * 4u;
    if (is_f32 && gather)
        hf_axes_copy_kernel<float, true>
            <<<grid, HF_AXES_THREADS, 0, s>>>(*g, axes, (const float *)src, (float *)dst);
    else if (is_f32)
        hf_axes_copy_kernel<float, false>
            <<<grid, HF_AXES_THREADS, 0, s>>>(*g, axes, (const float *)src, (float *)dst);
    else if (gather)
        hf_axes_copy_kernel<double, true>
            <<<grid, HF_AXES_THREADS, 0, s>>>(*g, axes, (const double *)src, (double *)dst);
    else
        hf_axes_copy_kernel<double, false>
            <<<grid, HF_AXES_THREADS, 0, s>>>(*g, axes, (const double *)src, (double *)dst);
    return cudaGetLastError();
}
