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
 * their counts into cost[3..5]. Chunks costed together (Qs and ins given) take grid layer
 * blockIdx.z each, their quantiser, values and costs (6 a chunk after cost) their own. */
template <typename T>
__global__ void __launch_bounds__(HF_AXES_THREADS)
    hf_axes_cost_kernel(const hf_geom g, qz_quant Q, const T *in, unsigned long long *cost,
                        const qz_quant *Qs, const void *const *ins)
{
    if (ins) {
        Q = Qs[blockIdx.z];
        in = (const T *)ins[blockIdx.z];
        cost += 6 * blockIdx.z;
    }
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

static cudaError_t hf_axes_cost_as(const hf_geom *g, const qz_quant *Q, const void *in,
                                   unsigned long long *cost, const qz_quant *Qs,
                                   const void *const *ins, unsigned count, cudaStream_t s)
{
    cudaError_t e = cudaMemsetAsync(cost, 0, 6 * count * sizeof *cost, s);
    const unsigned runs = (unsigned)hf_sample_runs(g);
    if (e != cudaSuccess || runs == 0)
        return e;
    const dim3 grid(runs, 1, count);
    if (Q->is_f32)
        hf_axes_cost_kernel<float>
            <<<grid, HF_AXES_THREADS, 0, s>>>(*g, *Q, (const float *)in, cost, Qs, ins);
    else
        hf_axes_cost_kernel<double>
            <<<grid, HF_AXES_THREADS, 0, s>>>(*g, *Q, (const double *)in, cost, Qs, ins);
    return cudaGetLastError();
}

cudaError_t hf_axes_launch_cost(const hf_geom *g, const qz_quant *Q, const void *in,
                                unsigned long long *cost, cudaStream_t s)
{
    return hf_axes_cost_as(g, Q, in, cost, NULL, NULL, 1, s);
}

cudaError_t hf_axes_launch_cost_many(const hf_geom *g, const qz_quant *Q0, const qz_quant *Qs,
                                     const void *const *ins, unsigned count,
                                     unsigned long long *cost, cudaStream_t s)
{
    return hf_axes_cost_as(g, Q0, NULL, cost, Qs, ins, count, s);
}

/* The copies between the chunk and the coded array. When the coded array's x is the chunk's x
 * both sides are rows (hf_axes_rows_kernel); else the chunk's rows run along the coded array's
 * axis A (0 or 1) and a 32 x 32 tile of the plane (A, x) goes through shared memory, so that
 * both sides are read and written in rows (hf_axes_tile_kernel). */
struct hf_axes_map {
    uint64_t n[3];        /* the coded array's edges */
    uint64_t stride[3];   /* the chunk's stride along each of its axes */
    __device__ uint64_t chunk(uint64_t z, uint64_t y, uint64_t x) const
    {
        return z * stride[0] + y * stride[1] + x * stride[2];
    }
};

__host__ __device__ static hf_axes_map hf_axes_map_of(const hf_geom *g, unsigned axes)
{
    unsigned a[3];
    hf_axes_of(axes, a);
    const uint64_t n[3] = {g->nz, g->ny, g->nx}, stride[3] = {g->ny * g->nx, g->nx, 1};
    hf_axes_map m;
    for (int k = 0; k < 3; k++) {
        m.n[k] = n[a[k]];
        m.stride[k] = stride[a[k]];
    }
    return m;
}

/* The coded axis (0 or 1) along which the chunk's rows run, or 2 when they are the coded
 * array's rows too. */
__host__ __device__ static unsigned hf_axes_row_axis(unsigned axes)
{
    unsigned a[3];
    hf_axes_of(axes, a);
    return a[2] == 2 ? 2u : a[0] == 2 ? 0u : 1u;
}

/* The CTAs of 256 threads a copy has work for: a warp a row (hf_axes_rows) or a thread an
 * element where both sides are rows, else a CTA a 32 x 32 tile. */
__host__ __device__ static uint64_t hf_axes_items(const hf_axes_map &m, unsigned A, uint64_t n)
{
    if (A == 2)
        return m.n[2] >= 32 ? (m.n[0] * m.n[1] + 7) / 8 : (n + 255) / 256;
    return m.n[1 - A] * ((m.n[A] + 31) / 32) * ((m.n[2] + 31) / 32);
}

/* Elements first, first + step, ... of the coded array. */
template <typename T, bool GATHER>
__device__ void hf_axes_elements(const hf_axes_map &m, uint64_t total, const T *src, T *dst,
                                 uint64_t first, uint64_t step)
{
    for (uint64_t k = first; k < total; k += step) {
        const uint64_t x = k % m.n[2], r = k / m.n[2], y = r % m.n[1], z = r / m.n[1];
        const uint64_t i = m.chunk(z, y, x);
        if (GATHER)
            dst[k] = src[i];
        else
            dst[i] = src[k];
    }
}

/* A row of `words` words of type W (16 bytes, or the element type) from s to d, by the lanes
 * of a warp. */
template <typename W>
__device__ __forceinline__ void hf_axes_row(const void *s, void *d, unsigned words, unsigned lane)
{
#pragma unroll 4
    for (unsigned x = lane; x < words; x += 32)
        ((W *)d)[x] = ((const W *)s)[x];
}

/* The copy where both sides are rows, by the threads first, first + step, ... (consecutive
 * thread numbers by warps, step a multiple of 32): a warp a row where rows are a warp long or
 * longer, so that a row's start is worked out once, not each element's coordinates by 64-bit
 * divisions, which made the copy issue-bound at half the device-to-device copy's speed; 16
 * bytes a load where rows and both arrays allow it; else element by element. */
template <typename T, bool GATHER>
__device__ void hf_axes_rows(const hf_axes_map &m, uint64_t total, const T *src, T *dst,
                             uint64_t first, uint64_t step)
{
    const unsigned nx = (unsigned)m.n[2], lane = (unsigned)(first % 32);
    if (nx < 32) {
        hf_axes_elements<T, GATHER>(m, total, src, dst, first, step);
        return;
    }
    /* every row starts at a multiple of nx on both sides (the chunk's strides are) */
    constexpr unsigned V = 16 / sizeof(T);
    const bool wide = nx % V == 0 && ((uintptr_t)src | (uintptr_t)dst) % 16 == 0;
    const uint64_t rows = m.n[0] * m.n[1];
    for (uint64_t r = first / 32; r < rows; r += step / 32) {
        const uint64_t chunk0 = m.chunk(r / m.n[1], r % m.n[1], 0), coded0 = r * nx;
        const T *s = src + (GATHER ? chunk0 : coded0);
        T *d = dst + (GATHER ? coded0 : chunk0);
        if (wide)
            hf_axes_row<uint4>(s, d, nx / V, lane);
        else
            hf_axes_row<T>(s, d, nx, lane);
    }
}

/* A CTA of 32 x 8 threads a tile: coordinates a along axis A and x of the coded array, the
 * other coded axis at o. Indices in type I: 32-bit where the chunk has fewer than 2^32
 * elements, since 64-bit multiplies cost several instructions each and the copy is bound by
 * what it issues as much as by memory. */
template <typename T, bool GATHER, typename I>
__device__ void hf_axes_tiles(const hf_axes_map &m, unsigned A, const T *src, T *dst)
{
    __shared__ T tile_s[32][33];
    /* edges and strides along a, x and o (the remaining coded axis): the chunk's, and the
     * coded array's (x's is 1); chosen, not indexed, so that m stays in registers */
    const I na = (I)(A ? m.n[1] : m.n[0]), nx = (I)m.n[2], ta = (na + 31) / 32, tx = (nx + 31) / 32;
    const I tiles = (I)(A ? m.n[0] : m.n[1]) * ta * tx;
    const I ca = (I)(A ? m.stride[1] : m.stride[0]), cx = (I)m.stride[2];
    const I co = (I)(A ? m.stride[0] : m.stride[1]);
    const I plane = (I)(m.n[1] * m.n[2]), da = A == 0 ? plane : nx, dn = A == 0 ? nx : plane;
    /* the side read in rows (the chunk along A when gathering, the coded array along x when
     * scattering) and the side written in rows */
    const I rs = GATHER ? ca : 1, rw = GATHER ? 1 : ca;
    for (I t = blockIdx.x; t < tiles; t += gridDim.x) {
        const I bx = t % tx * 32, ba = t / tx % ta * 32, o = t / tx / ta;
        const I chunk0 = o * co + ba * ca + bx * cx, coded0 = o * dn + ba * da + bx;
        const I src0 = GATHER ? chunk0 : coded0, dst0 = GATHER ? coded0 : chunk0;
        /* the other axis's strides on each side: x's on the chunk, a's on the coded array */
        const I ss = GATHER ? cx : da, sw = GATHER ? da : cx;
        for (unsigned r = threadIdx.y; r < 32; r += 8) {
            const I a = ba + (GATHER ? threadIdx.x : r), x = bx + (GATHER ? r : threadIdx.x);
            if (a < na && x < nx)
                tile_s[r][threadIdx.x] = src[src0 + r * ss + threadIdx.x * rs];
        }
        __syncthreads();
        for (unsigned r = threadIdx.y; r < 32; r += 8) {
            const I a = ba + (GATHER ? r : threadIdx.x), x = bx + (GATHER ? threadIdx.x : r);
            if (a < na && x < nx)
                dst[dst0 + r * sw + threadIdx.x * rw] = tile_s[threadIdx.x][r];
        }
        __syncthreads();
    }
}

template <typename T, bool GATHER>
__global__ void __launch_bounds__(HF_AXES_THREADS)
    hf_axes_rows_kernel(const hf_axes_map m, uint64_t total, const T *src, T *dst)
{
    hf_axes_rows<T, GATHER>(m, total, src, dst, blockIdx.x * (uint64_t)blockDim.x + threadIdx.x,
                            (uint64_t)gridDim.x * blockDim.x);
}

template <typename T, bool GATHER, typename I>
__global__ void __launch_bounds__(256)
    hf_axes_tile_kernel(const hf_axes_map m, unsigned A, const T *src, T *dst)
{
    hf_axes_tiles<T, GATHER, I>(m, A, src, dst);
}

/* Chunks copied together: grid layer blockIdx.z a chunk, 32 x 8 threads a CTA, each chunk's
 * copy as the kernels above would make it. */
template <typename T, bool GATHER>
__global__ void __launch_bounds__(256)
    hf_axes_many_kernel(const hf_geom g, const hf_axes_job *jobs)
{
    const hf_axes_job j = jobs[blockIdx.z];
    const hf_axes_map m = hf_axes_map_of(&g, j.axes);
    const unsigned A = hf_axes_row_axis(j.axes);
    if (A == 2)
        hf_axes_rows<T, GATHER>(m, g.n, (const T *)j.src, (T *)j.dst,
                                blockIdx.x * 256ull + threadIdx.y * 32 + threadIdx.x,
                                gridDim.x * 256ull);
    else if (g.n <= UINT32_MAX)
        hf_axes_tiles<T, GATHER, uint32_t>(m, A, (const T *)j.src, (T *)j.dst);
    else
        hf_axes_tiles<T, GATHER, uint64_t>(m, A, (const T *)j.src, (T *)j.dst);
}

/* Grid-stride copies: enough CTAs to fill the GPU, no more than the items (a small chunk's copy
 * is then one short wave, not 16 CTAs an SM waiting to start). */
static unsigned hf_axes_grid(uint64_t items, uint64_t most)
{
    return (unsigned)(items < most ? items : most);
}

template <typename T>
static void hf_axes_copy_as(const hf_geom *g, unsigned axes, int gather, const void *src,
                            void *dst, int sms, cudaStream_t s)
{
    const hf_axes_map m = hf_axes_map_of(g, axes);
    const unsigned A = hf_axes_row_axis(axes);
    const uint64_t most = (uint64_t)hf_grid(sms) * 4u;
    const T *in = (const T *)src;
    T *out = (T *)dst;
    if (A == 2) {
        const unsigned grid = hf_axes_grid(hf_axes_items(m, A, g->n), most);
        if (gather)
            hf_axes_rows_kernel<T, true><<<grid, HF_AXES_THREADS, 0, s>>>(m, g->n, in, out);
        else
            hf_axes_rows_kernel<T, false><<<grid, HF_AXES_THREADS, 0, s>>>(m, g->n, in, out);
        return;
    }
    const unsigned grid = hf_axes_grid(hf_axes_items(m, A, g->n), most);
    const dim3 block(32, 8);
    const bool narrow = g->n <= UINT32_MAX;
    if (gather && narrow)
        hf_axes_tile_kernel<T, true, uint32_t><<<grid, block, 0, s>>>(m, A, in, out);
    else if (gather)
        hf_axes_tile_kernel<T, true, uint64_t><<<grid, block, 0, s>>>(m, A, in, out);
    else if (narrow)
        hf_axes_tile_kernel<T, false, uint32_t><<<grid, block, 0, s>>>(m, A, in, out);
    else
        hf_axes_tile_kernel<T, false, uint64_t><<<grid, block, 0, s>>>(m, A, in, out);
}

cudaError_t hf_axes_launch_copy(const hf_geom *g, unsigned axes, int is_f32, int gather,
                                const void *src, void *dst, int sms, cudaStream_t s)
{
    if (is_f32)
        hf_axes_copy_as<float>(g, axes, gather, src, dst, sms, s);
    else
        hf_axes_copy_as<double>(g, axes, gather, src, dst, sms, s);
    return cudaGetLastError();
}

template <typename T>
static void hf_axes_copy_many_as(const hf_geom *g, const hf_axes_job *hjobs,
                                 const hf_axes_job *jobs, unsigned count, int gather, int sms,
                                 cudaStream_t s)
{
    uint64_t items = 1;
    for (unsigned k = 0; k < count; k++) {
        const unsigned A = hf_axes_row_axis(hjobs[k].axes);
        const uint64_t n = hf_axes_items(hf_axes_map_of(g, hjobs[k].axes), A, g->n);
        items = n > items ? n : items;
    }
    const uint64_t most = (uint64_t)hf_grid(sms) * 4u / count;
    const dim3 grid(hf_axes_grid(items, most < 2 ? 2 : most), 1, count), block(32, 8);
    if (gather)
        hf_axes_many_kernel<T, true><<<grid, block, 0, s>>>(*g, jobs);
    else
        hf_axes_many_kernel<T, false><<<grid, block, 0, s>>>(*g, jobs);
}

cudaError_t hf_axes_launch_copy_many(const hf_geom *g, const hf_axes_job *hjobs,
                                     const hf_axes_job *jobs, unsigned count, int is_f32,
                                     int gather, int sms, cudaStream_t s)
{
    if (count == 0)
        return cudaSuccess;
    if (is_f32)
        hf_axes_copy_many_as<float>(g, hjobs, jobs, count, gather, sms, s);
    else
        hf_axes_copy_many_as<double>(g, hjobs, jobs, count, gather, sms, s);
    return cudaGetLastError();
}
