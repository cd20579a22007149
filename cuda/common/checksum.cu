/* The checksum pass over a payload already in device memory (decoders, raw chunks), with the
 * fixed-length decoder's count of block headers on the way. */
#include "checksum.cuh"
#include "stages.h"

#define HZC_SUM_THREADS 256

/* A span a row of the grid (blockIdx.y): p and n, or spans[row] when spans is given. */
__global__ void __launch_bounds__(HZC_SUM_THREADS)
    hz_checksum_kernel(const uint8_t *p, uint64_t n, const hzc_span *spans, uint64_t pop_word,
                       uint64_t npop, hzc_scalars *sc)
{
    if (spans) {
        p = spans[blockIdx.y].p;
        n = spans[blockIdx.y].n;
    }
    sc += blockIdx.y;
    const uint64_t t0 = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const uint64_t nt = (uint64_t)gridDim.x * blockDim.x;
    uint32_t s = dv_checksum_share(p, n, t0, nt);
    uint64_t pop = 0;
    for (uint64_t k = t0; k < npop; k += nt)
        pop += __popc(dv_payload_word(p, n, pop_word + k));
    s = __reduce_add_sync(FULL, s);
    pop = dv_warp_sum(pop);
    if ((threadIdx.x & 31u) == 0) {
        atomicAdd(&sc->sum, s);
        if (pop)
            atomicAdd(&sc->nhdr_total, (unsigned long long)pop);
    }
}

cudaError_t hzc_launch_checksum(const uint8_t *p, uint64_t n, uint64_t pop_word, uint64_t npop,
                                hzc_scalars *sc, int sms, cudaStream_t s)
{
    hz_checksum_kernel<<<hzc_grid_for((n + 3) / 4, sms), HZC_SUM_THREADS, 0, s>>>(
        p, n, NULL, pop_word, npop, sc);
    return cudaGetLastError();
}

cudaError_t hzc_launch_checksum_batch(const hzc_span *spans, unsigned count, uint64_t most,
                                      uint64_t pop_word, uint64_t npop, hzc_scalars *sc, int sms,
                                      cudaStream_t s)
{
    /* the grid of the longest span, shared among the batch's spans */
    const unsigned x = hzc_grid_for((most + 3) / 4, sms), per = (x + count - 1) / count;
    hz_checksum_kernel<<<dim3(per, count), HZC_SUM_THREADS, 0, s>>>(NULL, 0, spans, pop_word,
                                                                    npop, sc);
    return cudaGetLastError();
}
