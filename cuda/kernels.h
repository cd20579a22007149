/* Launchers of the CUDA backend's kernels (internal to cuda/). Each enqueues work on a stream
 * and returns the launch status; errors of the work itself show at the next synchronisation. */
#ifndef H5ZGPU_CUDA_KERNELS_H
#define H5ZGPU_CUDA_KERNELS_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "fixed_common.h"
#include "huff_common.h"
#include "huff_interp.h"
extern "C" {
#include "fixed.h"
#include "huff.h"
}

#define FULL 0xffffffffu   /* every lane of a warp */

/* 256 threads a CTA: 8 warps of 4 blocks each cover one tile of FL_TILE blocks. */
#define HZC_THREADS 256
#define HZC_WARPS (HZC_THREADS / 32)
#define HZC_BLOCKS_PER_WARP (FL_TILE / HZC_WARPS)
/* Partial results of the statistics pass: one per CTA of its grid. */
#define HZC_STATS_CTAS 1024

/* Counters and results shared by the host and one call's kernels; zeroed before each pass. */
typedef struct hzc_scalars {
    unsigned long long ticket;      /* next tile for the look-back kernels */
    unsigned long long nhdr_total;  /* header bytes of the whole payload */
    unsigned long long bytes_total; /* block payload bytes (encoder) */
    unsigned int sum;               /* checksum sum (hz_sum) */
    unsigned int corrupt;           /* decoder: nonzero when the payload is invalid */
    unsigned int fill_seen;         /* statistics: some element is the fill value */
    int any;                        /* statistics: some value counted */
    double lo, hi;
} hzc_scalars;

/* Smallest and largest finite value of a chunk (PWREL: smallest non-zero magnitude in lo).
 * Equal values differ only as +0 and -0, which the quantiser cannot tell apart except through
 * hi - lo; the final kernel makes hi and lo the same bits when equal, as the CPU's are then. */
typedef struct hzc_minmax {
    double lo, hi;
} hzc_minmax;

/* Fill elements (has_fill, fill_bits) are left out and reported in sc->fill_seen, which the
 * caller zeroes before the launch. */
cudaError_t hzc_launch_stats(const void *in, uint64_t n, int is_f32, int pwrel, int has_fill,
                             uint64_t fill_bits, hzc_minmax *partial, hzc_scalars *sc, int sms,
                             cudaStream_t s);

/* Checksum sum of n bytes at p into sc->sum; with npop > 0 also the popcount of the npop
 * 32-bit words that follow the payload's base (the tile masks) into sc->nhdr_total. */
cudaError_t hzc_launch_sum(const uint8_t *p, uint64_t n, uint64_t npop, hzc_scalars *sc, int sms,
                           cudaStream_t s);

cudaError_t hzc_launch_encode(const fl_geom *g, const qz_quant *Q, const void *in, uint8_t *tab,
                              uint8_t *pay, uint64_t paycap, unsigned long long *status,
                              hzc_scalars *sc, cudaStream_t s);

/* Copies tables + headers (tab) and block payloads (pay) into place at dst and sums them, when
 * the total fits cap bytes. */
cudaError_t hzc_launch_assemble(const uint8_t *tab, const uint8_t *pay, uint8_t *dst,
                                uint64_t cap, uint64_t tables, hzc_scalars *sc, int sms,
                                cudaStream_t s);

cudaError_t hzc_launch_decode(const fl_geom *g, const qz_quant *Q, const uint8_t *in,
                              uint64_t len, void *out, unsigned long long *status,
                              hzc_scalars *sc, cudaStream_t s);

/* ---- Huffman codec (huff_kernels.cu, huff_interp_kernels.cu) ---- */

/* An element's bits, zero-extended, and an element written from its bits. */
__device__ __forceinline__ uint64_t hf_bits(float v)
{
    return __float_as_uint(v);
}

__device__ __forceinline__ uint64_t hf_bits(double v)
{
    return (uint64_t)__double_as_longlong(v);
}

__device__ __forceinline__ void hf_put_bits(float *out, uint64_t i, uint64_t bits)
{
    ((uint32_t *)out)[i] = (uint32_t)bits;
}

__device__ __forceinline__ void hf_put_bits(double *out, uint64_t i, uint64_t bits)
{
    ((unsigned long long *)out)[i] = bits;
}

/* Markers in the quantisation codes the token kernel reads, outside every code's range. */
#define HZC_CODE_FILL INT32_MIN
#define HZC_CODE_VERBATIM (INT32_MIN + 1)

/* Token of an interpolation delta c, which may be a fill or verbatim marker (a verbatim value
 * takes the token of delta 0, as the CPU's tokenise_tile gives it). */
__device__ __forceinline__ unsigned hf_ip_token(int32_t c, unsigned R, bool *verb)
{
    const bool fill = c == HZC_CODE_FILL;
    *verb = c == HZC_CODE_VERBATIM;
    const uint32_t zz = hf_zigzag32(fill || *verb ? 0 : c);
    return fill ? HF_TOK_FILL : zz < 2u * R - 2u ? zz + 2u : HF_TOK_ESCAPE;
}

/* The interpolation's stand-in token for a verbatim value, which hf_ip_token_kernel lists and
 * replaces by hf_ip_token's (above every token). */
#define HZC_TOK_VERBATIM 0xFFFFu

/* The codebook of one form, built beside the others; hf_choose_kernel keeps the smallest. */
typedef struct hzc_huff_cand {
    unsigned long long size, bits;
    unsigned m0, m1;
    uint16_t code[HF_MAX_SYMS];
    uint8_t len[HF_MAX_SYMS];
} hzc_huff_cand;

/* Device state of one Huffman encoding, zeroed by its launcher: what the passes count and the
 * codebook hf_book_kernel and hf_choose_kernel choose. */
typedef struct hzc_huff_plan {
    unsigned long long ticket;             /* next tile of the token kernel's look-back */
    unsigned long long cost[4];            /* as huff_cpu.c's cost: [o] Lorenzo order o's
                                            * over the sampled tiles, [0] their elements */
    unsigned long long cost_ip;            /* interpolation's cost there, when tried */
    unsigned pred;                         /* predictor: a Lorenzo order or HF_PRED_INTERP */
    unsigned long long n_out, n_verb;
    unsigned long long size;               /* payload bytes under the chosen form */
    unsigned long long bits;               /* stream bits under the chosen form */
    unsigned form, rs, m0, m1, too_small;
    unsigned may[3];                       /* form f may win (huff_cpu.c's may[]) */
    unsigned hist[HF_MAX_SYMS];            /* form 0 token counts */
    unsigned hist_alt[2][HF_MAX_SYMS];     /* form 1 and form 2 token counts */
    hzc_huff_cand book[3];                 /* each form's codebook */
    alignas(16) uint32_t cl[HF_MAX_SYMS];  /* the chosen codebook: code | length << 16 */
    uint8_t len[HF_MAX_SYMS];
} hzc_huff_plan;

/* Device buffers of one Huffman encoding. Outliers and verbatim values past kmax_* are not
 * stored: the payload then exceeds cap anyway. */
typedef struct hzc_huff_bufs {
    uint16_t *tok;                  /* n tokens, tile-major, readable up to 8 past n */
    int32_t *ip_u;                  /* n int32: interpolation's codes */
    int32_t *ip_delta;              /* n int32, tile-major: the interpolation's outliers' deltas */
    int32_t *ip_delta2;             /* hzc_ip_even_count int32: deltas at even coordinates */
    uint32_t *out_pos;
    int32_t *out_delta;
    uint64_t kmax_out;
    uint32_t *verb_pos;
    uint64_t *verb_bits;
    uint64_t kmax_verb;
    uint32_t *subbits;              /* stream bits of each sub-chunk */
    unsigned long long *status;     /* the tiles' look-back words: 2 ntiles */
    uint64_t *suboff;               /* nsub: each sub-chunk's first bit in the stream */
    hzc_huff_plan *plan;
    uint8_t *dst;                   /* 4-aligned, cap bytes */
    uint64_t cap;
} hzc_huff_bufs;

/* Encodes the payload into b->dst; sc->bytes_total receives its size (above cap: nothing was
 * written) and sc->sum, which the caller zeroes, its checksum sum. */
cudaError_t hzc_huff_launch_encode(const hf_geom *g, const qz_quant *Q, unsigned radius,
                                   const void *in, const hzc_huff_bufs *b, hzc_scalars *sc,
                                   int sms, cudaStream_t s);

/* The interpolation candidate (huff_interp.h), after the sampled Lorenzo costs: when those in
 * plan say it is worth trying, its cost over the sampled tiles into plan->cost_ip and the
 * predictor into plan->pred; when that is the interpolation, its tokens under radius R into
 * tok (HZC_TOK_VERBATIM for a verbatim value) and an outlier's delta at its place in delta
 * (else tok is left partly written). u (n int32) and delta2 (hzc_ip_even_count int32) are
 * scratch. */
cudaError_t hzc_ip_launch_encode(const hf_geom *g, const qz_quant *Q, unsigned R, const void *in,
                                 uint16_t *tok, int32_t *u, int32_t *delta, int32_t *delta2,
                                 hzc_huff_plan *plan, cudaStream_t s);

/* The elements of the chunk's lattice of even coordinates. */
static inline uint64_t hzc_ip_even_count(const hf_geom *g)
{
    return ((g->nz + 1) / 2) * ((g->ny + 1) / 2) * ((g->nx + 1) / 2);
}

/* Values from the deltas of an interpolated payload (outliers placed), u n int32 of scratch,
 * then its verbatim values; a damaged delta sets sc->corrupt. */
cudaError_t hzc_ip_launch_decode(const hf_geom *g, const qz_quant *Q, const hf_layout *L,
                                 const uint8_t *in, const int32_t *delta, int32_t *u, void *out,
                                 hzc_scalars *sc, int sms, cudaStream_t s);

/* Decodes a payload of len bytes at the 4-aligned in, whose parts hf_parse located in L, with
 * the decoder table it built (table, device, 16-byte aligned). delta holds n int32 (2n for
 * interpolation, whose codes take the second half) and is 16-byte aligned; suboff holds
 * nsub + 1 offsets. Any inconsistency sets sc->corrupt (zeroed by the caller). */
cudaError_t hzc_huff_launch_decode(const hf_geom *g, const qz_quant *Q, const hf_layout *L,
                                   const uint8_t *in, uint64_t len, const uint16_t *table,
                                   int32_t *delta, uint64_t *suboff, void *out, hzc_scalars *sc,
                                   int sms, cudaStream_t s);

#endif
