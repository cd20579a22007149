/* The chunk checksum's payload terms (hz_checksum_term, docs/FORMAT.md) on the device: each
 * thread of a grid-stride pass sums its share of the words. */
#ifndef H5ZGPU_CUDA_CHECKSUM_CUH
#define H5ZGPU_CUDA_CHECKSUM_CUH

#include "device.cuh"

#include "portable.h"

#define DV_SUM_LOADS 4   /* 16-byte loads a thread keeps in flight */

/* Word w of the n bytes at p, zero-padded past the end. */
__device__ __forceinline__ uint32_t dv_payload_word(const uint8_t *p, uint64_t n, uint64_t w)
{
    if (((uintptr_t)p & 3u) == 0 && 4 * w + 4 <= n)
        return ((const uint32_t *)p)[w];
    uint32_t v = 0;
    for (unsigned i = 0; i < 4 && 4 * w + i < n; i++)
        v |= (uint32_t)p[4 * w + i] << (8 * i);
    return v;
}

/* The share of thread t0 of nt (grid-stride) of the checksum terms of the n bytes at p. Where p
 * is 16-byte aligned, 16 bytes a load and DV_SUM_LOADS loads in flight a thread: a word at a
 * time, each thread would wait out the memory's latency once a word. */
__device__ __forceinline__ uint32_t dv_checksum_share(const uint8_t *p, uint64_t n, uint64_t t0,
                                                      uint64_t nt)
{
    const uint64_t nw = (n + 3) / 4;
    const uint64_t nq = ((uintptr_t)p & 15u) == 0 ? n / 16 : 0;   /* whole 16-byte quads */
    const uint4 *q = (const uint4 *)p;
    uint32_t s = 0;
    for (uint64_t i = t0; i < nq; i += DV_SUM_LOADS * nt) {
        uint4 v[DV_SUM_LOADS];
#pragma unroll
        for (unsigned k = 0; k < DV_SUM_LOADS; k++)
            v[k] = i + k * nt < nq ? q[i + k * nt] : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (unsigned k = 0; k < DV_SUM_LOADS; k++) {
            const uint64_t w = 4 * (i + k * nt);
            if (i + k * nt < nq)
                s += hz_checksum_term(v[k].x, w) + hz_checksum_term(v[k].y, w + 1) +
                     hz_checksum_term(v[k].z, w + 2) + hz_checksum_term(v[k].w, w + 3);
        }
    }
    for (uint64_t w = 4 * nq + t0; w < nw; w += nt)
        s += hz_checksum_term(dv_payload_word(p, n, w), w);
    return s;
}

#endif
