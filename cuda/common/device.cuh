/* Device primitives every kernel file shares: warp and CTA scans, predicated shared-memory
 * operations, element bits and unaligned words. Device code only (included by .cu files). */
#ifndef H5ZGPU_CUDA_DEVICE_CUH
#define H5ZGPU_CUDA_DEVICE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#define FULL 0xffffffffu   /* every lane of a warp */

__device__ __forceinline__ unsigned dv_lanemask_lt()
{
    return (1u << (threadIdx.x & 31u)) - 1u;
}

template <typename V>
__device__ __forceinline__ V dv_warp_incl(V v)
{
    const unsigned lane = threadIdx.x & 31u;
    for (unsigned d = 1; d < 32; d <<= 1) {
        V u = __shfl_up_sync(FULL, v, d);
        if (lane >= d)
            v += u;
    }
    return v;
}

__device__ __forceinline__ unsigned long long dv_warp_sum(unsigned long long v)
{
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_xor_sync(FULL, v, d);
    return v;
}

/* Exclusive prefix of v over the CTA (all its threads call it) and the CTA's total. */
static __device__ uint64_t dv_block_excl(uint64_t v, uint64_t *total)
{
    __shared__ uint64_t w_s[32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const uint64_t inc = dv_warp_incl(v);
    if (lane == 31)
        w_s[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        uint64_t x = dv_warp_incl(lane < nw ? w_s[lane] : (uint64_t)0);
        if (lane < nw)
            w_s[lane] = x;
    }
    __syncthreads();
    const uint64_t r = (warp ? w_s[warp - 1] : 0) + inc - v;
    *total = w_s[nw - 1];
    __syncthreads();
    return r;
}

/* p ? a : b, both worked out first: the compiler would otherwise branch around a's arithmetic
 * (and the warp diverge), where a select costs one instruction. */
__device__ __forceinline__ unsigned dv_select(bool p, unsigned a, unsigned b)
{
    unsigned r;
    asm("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %1, 0;\n\tselp.u32 %0, %2, %3, q;\n\t}"
        : "=r"(r)
        : "r"((unsigned)p), "r"(a), "r"(b));
    return r;
}

/* PTX of `op [addr], v` done only where p (operands: addr, v, p) holds: the code around it
 * then needs no branch. */
#define DV_PREDICATED_SHARED(op) \
    "{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q " op " [%0], %1;\n\t}"

/* v stored to the shared-memory word at addr where p holds. */
__device__ __forceinline__ void dv_shared_store(uint32_t addr, uint32_t v, bool p)
{
    asm volatile(DV_PREDICATED_SHARED("st.shared.u32")::"r"(addr), "r"(v), "r"((unsigned)p)
                 : "memory");
}

/* v added to the shared-memory word at addr where p holds. Without a memory clobber: the sums
 * are read only after a barrier, and other loads and stores may move across the add. */
__device__ __forceinline__ void dv_shared_add(uint32_t addr, unsigned v, bool p)
{
    asm volatile(DV_PREDICATED_SHARED("red.shared.add.u32")::"r"(addr), "r"(v), "r"((unsigned)p));
}

/* N rounds of a warp's loads of p, entry base + 32 k + lane in round k (0 at end and past it),
 * issued together before any is used. */
template <unsigned N, typename T, typename I, typename V>
__device__ __forceinline__ void dv_warp_batch(const T *p, I base, I end, V (&v)[N])
{
    const unsigned lane = threadIdx.x & 31u;
#pragma unroll
    for (unsigned k = 0; k < N; k++) {
        const I i = base + 32 * k + lane;
        v[k] = i < end ? (V)p[i] : (V)0;
    }
}

/* An element's bits, zero-extended (NaN payloads and signalling NaNs as they are), and an
 * element written from its bits. */
__device__ __forceinline__ uint64_t dv_bits(float v)
{
    return __float_as_uint(v);
}

__device__ __forceinline__ uint64_t dv_bits(double v)
{
    return (uint64_t)__double_as_longlong(v);
}

__device__ __forceinline__ void dv_put_bits(float *out, uint64_t i, uint64_t bits)
{
    ((uint32_t *)out)[i] = (uint32_t)bits;
}

__device__ __forceinline__ void dv_put_bits(double *out, uint64_t i, uint64_t bits)
{
    ((unsigned long long *)out)[i] = bits;
}

/* The n low bytes of v at p, little-endian. */
__device__ __forceinline__ void dv_put_bytes(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Little-endian word at byte offset o of a 4-aligned buffer that has 4 readable bytes past it. */
__device__ __forceinline__ uint32_t dv_word_at(const uint8_t *base, uint64_t o)
{
    const uint32_t *w = (const uint32_t *)base + (o >> 2);
    const unsigned sh = (unsigned)(o & 3u) * 8u;
    return sh ? __funnelshift_r(w[0], w[1], sh) : w[0];
}

#endif
