/* What the shared stages give the backend: the counters one call's kernels share with the host,
 * and the launchers of the statistics and checksum passes both codecs use. Each launcher
 * enqueues work on a stream and returns the launch status; errors of the work itself show at the
 * next synchronisation. */
#ifndef H5ZGPU_CUDA_STAGES_H
#define H5ZGPU_CUDA_STAGES_H

#include <cuda_runtime.h>
#include <stdint.h>

/* Partial results of the statistics pass: one per CTA of its grid. */
#define HZC_STATS_CTAS 1024

/* Counters and results shared by the host and one call's kernels; zeroed before each pass. */
typedef struct hzc_scalars {
    unsigned long long ticket;      /* next tile for the look-back kernels */
    unsigned long long nhdr_total;  /* fixed-length: header bytes of the whole payload */
    unsigned long long bytes_total; /* payload bytes (encoders) */
    unsigned int sum;               /* checksum sum (hz_sum) */
    unsigned int corrupt;           /* decoders: nonzero when the payload is invalid */
    int any;                        /* statistics: some value counted */
    double lo, hi;
    /* statistics: the census (qz_census) of the declared fill value and of NaN of other bits,
     * the first of those NaN as ~index, and its bits */
    unsigned long long fill_count, nan_count, nan_key, nan_bits;
} hzc_scalars;

/* Smallest and largest finite value of a chunk (PWREL: smallest non-zero magnitude in lo).
 * Equal values differ only as +0 and -0, which the quantiser cannot tell apart except through
 * hi - lo; the final kernel makes hi and lo the same bits when equal, as the CPU's are then. */
typedef struct hzc_minmax {
    double lo, hi;
} hzc_minmax;

/* qz_stats_cpu on the device: sc->any, lo, hi for qz_init; elements of the declared fill value
 * (has_fill, fill_bits) are left out, and the census goes to sc's counters, which the caller
 * zeroes before the launch. */
cudaError_t hzc_launch_stats(const void *in, uint64_t n, int is_f32, int pwrel, int has_fill,
                             uint64_t fill_bits, hzc_minmax *partial, hzc_scalars *sc, int sms,
                             cudaStream_t s);

/* The same for count chunks of n values each at ins[] (a device array), sc[c] for chunk c;
 * partial: HZC_STATS_CTAS a chunk. */
cudaError_t hzc_launch_stats_batch(const void *const *ins, unsigned count, uint64_t n, int is_f32,
                                   int pwrel, int has_fill, uint64_t fill_bits,
                                   hzc_minmax *partial, hzc_scalars *sc, int sms, cudaStream_t s);

/* Checksum sum (hz_sum) of n bytes at p into sc->sum; with npop > 0 also the popcount of the
 * npop 32-bit words from word pop_word on into sc->nhdr_total (the fixed-length payload's tile
 * masks, whose bits count its block headers). */
cudaError_t hzc_launch_checksum(const uint8_t *p, uint64_t n, uint64_t pop_word, uint64_t npop,
                                hzc_scalars *sc, int sms, cudaStream_t s);

/* A byte string in device memory. */
typedef struct hzc_span {
    const uint8_t *p;
    uint64_t n;
} hzc_span;

/* The same for count spans at spans[] (a device array; most: the longest), sc[c] for span c. */
cudaError_t hzc_launch_checksum_batch(const hzc_span *spans, unsigned count, uint64_t most,
                                      uint64_t pop_word, uint64_t npop, hzc_scalars *sc, int sms,
                                      cudaStream_t s);

/* CTAs of 256 threads for a grid-stride pass over items: enough to fill the SMs, no more. */
static inline unsigned hzc_grid_for(uint64_t items, int sms)
{
    uint64_t want = (items + 255) / 256;
    uint64_t most = (uint64_t)(sms > 0 ? sms : 1) * 8;
    return (unsigned)(want < 1 ? 1 : (want < most ? want : most));
}

#endif
