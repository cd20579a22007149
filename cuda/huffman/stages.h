/* The Huffman codec's device state and launchers (cuda/huffman/). encode.cu and decode.cu run the
 * stages in order; each stage's launcher says what it reads and writes. */
#ifndef H5ZGPU_CUDA_HUFF_STAGES_H
#define H5ZGPU_CUDA_HUFF_STAGES_H

#include "../common/stages.h"

#include "huff_common.h"
#include "huff_ans.h"
#include "huff_interp.h"
extern "C" {
#include "huff.h"
}

/* The codebook of one form, built beside the others; hf_enc_choose_kernel keeps the smallest. */
typedef struct hf_enc_book {
    unsigned long long size, bits;
    unsigned m0, m1;
    uint16_t code[HF_MAX_SYMS];
    uint8_t len[HF_MAX_SYMS];
} hf_enc_book;

/* Device state of one Huffman encoding, zeroed before the pipeline runs: what the stages count
 * and the codebook they choose. Each field's writer, then its readers (kernel files). */
typedef struct hf_enc_plan {
    unsigned long long ticket;             /* tokens.cu: the token kernels' tile tickets */
    unsigned long long cost[4];            /* tokens.cu (sample) -> interp.cu: huff_cpu.c's
                                            * cost, [o] Lorenzo order o's over the sampled
                                            * tiles, [0] their elements */
    unsigned long long cost_ip;            /* interp.cu: the interpolation's cost there, or
                                            * part of it once it loses (hf_ip_lost) */
    unsigned pred;                         /* interp.cu -> tokens.cu, stream_encode.cu: a
                                            * Lorenzo order or HF_PRED_INTERP */
    unsigned long long n_out, n_verb;      /* tokens.cu -> codebook.cu, stream_encode.cu */
    unsigned long long size;               /* codebook.cu -> stream_encode.cu: payload bytes */
    unsigned long long bits;               /* codebook.cu -> stream_encode.cu: stream bits */
    unsigned form, rs, m0, m1;             /* codebook.cu -> stream_encode.cu: the chosen
                                            * form, form 0's commonest token, stored lengths */
    unsigned too_small;                    /* codebook.cu -> stream_encode.cu: over cap */
    unsigned may[3];                       /* codebook.cu (may win) -> stream_encode.cu (form
                                            * hists), codebook.cu: huff_cpu.c's may[] */
    unsigned hist[HF_MAX_SYMS];            /* tokens.cu -> codebook.cu: form 0 token counts */
    unsigned hist_alt[2][HF_MAX_SYMS];     /* codebook.cu, stream_encode.cu (form hists) ->
                                            * codebook.cu: form 1 and form 2 token counts */
    hf_enc_book book[3];                   /* codebook.cu: each form's codebook */
    alignas(16) uint32_t cl[HF_MAX_SYMS];  /* codebook.cu -> stream_encode.cu: the chosen
                                            * codebook, code | length << 16 */
    uint8_t len[HF_MAX_SYMS];              /* codebook.cu -> stream_encode.cu */
} hf_enc_plan;

/* Device state of the ANS form (ans_encode.cu): the encoder's counts, then each table's tokens,
 * built-in table, nibbles and packed entries (frequency | cumulative << 16), and what the
 * sub-chunks took. */
typedef struct hf_ans_plan {
    unsigned ntab;
    unsigned m[HF_ANS_TABLES];
    unsigned book[HF_ANS_TABLES];   /* the built-in table a table is, or 0 */
    unsigned long long nib[HF_ANS_TABLES];
    unsigned long long nibbles, words, busy, busy_groups;
    unsigned count_bytes;   /* of a busy sub-chunk's word count (huff_ans.h) */
    uint32_t count[HF_ANS_TABLES][2 * HF_RADIUS_MAX];
    uint32_t fc[HF_ANS_TABLES][2 * HF_RADIUS_MAX];
} hf_ans_plan;

/* A sub-chunk's row of the encoder's scratch words: HF_ANS_SUB_WORDS rounded up to whole
 * 16-byte stores. */
#define HF_ANS_SCRATCH ((HF_ANS_SUB_WORDS + 7u) & ~7u)

/* The ANS decoder's slot lookup: a table's HF_ANS_M slots in HF_ANS_BUCKETS buckets, each
 * holding the token of its first slot; a slot's token is that or one of the next few, that
 * alone where the bucket is marked pure. */
#define HF_ANS_BUCKET_BITS 10u
#define HF_ANS_BUCKETS (1u << HF_ANS_BUCKET_BITS)
#define HF_ANS_PURE 0x8000u

/* The ANS decoder's device arrays: the packed entries (span = 2R a table, zero past m), the
 * buckets (HF_ANS_BUCKETS a table) and the sub-chunks' first words (nsub + 1). */
typedef struct hf_ans_dec {
    unsigned ntab, span;
    unsigned m[HF_ANS_TABLES];
    const uint32_t *fc;
    uint16_t *bucket;
    uint64_t *woff;
} hf_ans_dec;

/* Device buffers of one Huffman encoding. Outliers and verbatim values past kmax_* are not
 * stored: the payload then exceeds cap anyway. */
typedef struct hf_enc_bufs {
    uint16_t *tok;                  /* n tokens, tile-major, readable up to 8 past n */
    int32_t *ip_u;                  /* n int32: interpolation's codes */
    int32_t *ip_delta;              /* n int32, tile-major: the interpolation's outliers' deltas */
    int32_t *ip_delta2;             /* hf_ip_even_count int32: deltas at even coordinates */
    uint32_t *out_pos;
    int32_t *out_delta;
    uint64_t kmax_out;
    uint32_t *verb_pos;
    uint64_t *verb_bits;
    uint64_t kmax_verb;
    uint32_t *subbits;              /* stream bits of each sub-chunk */
    unsigned long long *status;     /* the tiles' look-back words: 2 ntiles */
    uint64_t *suboff;               /* nsub: each sub-chunk's first bit in the stream */
    hf_enc_plan *plan;
    uint8_t *dst;                   /* 4-aligned, cap bytes */
    uint64_t cap;
    uint16_t *tok_copy;             /* tests, else NULL: host copy of the tokens, taken before
                                     * the stream's packing reuses their memory */
    unsigned axes;                  /* the axis order (payload byte 14) */
    hf_ans_plan *ans;               /* the ANS form: its plan, each element's table entry
                                     * (table x 2R + token, tile-major, readable 8 past n),
                                     * each sub-chunk's words (a row of HF_ANS_SCRATCH), their
                                     * count, first word and place among the busy sub-chunks,
                                     * and the groups' */
    uint16_t *ans_key;
    uint16_t *ans_words;
    uint32_t *ans_nwords;
    uint64_t *ans_woff;
    uint32_t *ans_bidx;
    uint32_t *ans_gidx;             /* each group's place among the busy groups */
} hf_enc_bufs;

/* The elements of the chunk's lattice of even coordinates. */
static inline uint64_t hf_ip_even_count(const hf_geom *g)
{
    return ((g->nz + 1) / 2) * ((g->ny + 1) / 2) * ((g->nx + 1) / 2);
}

/* The arguments of every encoding kernel: the chunk, its quantiser and radius, its values, the
 * device buffers (plan included) and the call's counters. Chunks coded together (count of one
 * geometry and radius) take grid layer blockIdx.z each, their own arguments at many[z] (device
 * memory); one chunk alone has many NULL and count 1. */
typedef struct hf_enc_args {
    hf_geom g;
    qz_quant Q;
    unsigned R;
    const void *in;
    hf_enc_bufs b;
    hzc_scalars *sc;
    const struct hf_enc_args *many;
    unsigned count;
} hf_enc_args;

/* The arguments of every decoding kernel: the chunk, its quantiser, the payload's parts (L) at in,
 * the Huffman decoder table or the ANS form's tables, the deltas (n int32, 2n for an interpolated
 * payload), the sub-chunks' offsets, the output and the call's counters. Chunks decoded together
 * (count of one coded shape, predictor, radius, stream kernel and quantiser constants) take grid
 * layer blockIdx.z each, their own arguments at many[z] (device memory); one chunk alone has many
 * NULL and count 1. */
typedef struct hf_dec_args {
    hf_geom g;
    qz_quant Q;
    hf_layout L;
    const uint8_t *in;
    const uint16_t *table;
    hf_ans_dec ans;
    int32_t *delta;
    uint64_t *suboff;
    void *out;
    hzc_scalars *sc;
    const struct hf_dec_args *many;
    unsigned count;
} hf_dec_args;

/* A second stream, non-blocking, and two events of the workspace: the encoder's stages that
 * need not wait for one another leave the call's stream at fork and rejoin it at join. */
typedef struct hzc_side {
    cudaStream_t s;
    cudaEvent_t fork, join;
} hzc_side;

/* Encodes the payload into b->dst (the pipeline of encode.cu, on s and side->s); sc->bytes_total
 * receives its size (above cap: nothing was written) and sc->sum, which the caller zeroes, its
 * checksum sum. */
cudaError_t hzc_huff_launch_encode(const hf_geom *g, const qz_quant *Q, unsigned radius,
                                   const void *in, const hf_enc_bufs *b, hzc_scalars *sc,
                                   int sms, cudaStream_t s, const hzc_side *side);

/* The same for count chunks of one geometry and radius in one pass of launches: chunk k's
 * arguments at many[k] (device memory; a0 is chunk 0's, with many and count set), each chunk's
 * plan, look-back status words (2 ntiles), ANS plan and counters zeroed by the caller, and no
 * token copy (b.tok_copy NULL). */
cudaError_t hzc_huff_launch_encode_many(const hf_enc_args *a0, int sms, cudaStream_t s,
                                        const hzc_side *side);

/* Decodes a payload of len bytes at the 4-aligned in, whose parts hf_parse located in L, with
 * the decoder table it built (table, device, 16-byte aligned) or, in the ANS form, the tables
 * of ans (slot tables built here): the pipeline of decode.cu. delta
 * holds n int32 (2n for interpolation, whose codes take the second half) and is 16-byte
 * aligned; suboff holds nsub + 1 offsets. Any inconsistency sets sc->corrupt (zeroed by the
 * caller). */
cudaError_t hzc_huff_launch_decode(const hf_geom *g, const qz_quant *Q, const hf_layout *L,
                                   const uint8_t *in, uint64_t len, const uint16_t *table,
                                   const hf_ans_dec *ans, int32_t *delta, uint64_t *suboff,
                                   void *out, hzc_scalars *sc, int sms, cudaStream_t s);

/* The same for count chunks of one coded shape, predictor, radius and kind in one pass of
 * launches: chunk k's arguments at many[k] (device memory; a0 is chunk 0's, with many and count
 * set), their tables uploaded and counters zeroed by the caller, the checksum pass the
 * caller's. */
cudaError_t hzc_huff_launch_decode_many(const hf_dec_args *a0, int sms, cudaStream_t s);

/* The kernels that decode a's stream: chunks decoded in one pass need the same kind (and the
 * same coded shape, predictor and radius). */
unsigned hzc_huff_decode_kind(const hf_dec_args *a);

/* axes.cu: the axis order's costs of the chunk g over its sampled tiles into cost[0..2] and
 * their terms into cost[3..5] (zeroed first); the copy of the chunk into the coded array
 * (gather) or back. */
cudaError_t hf_axes_launch_cost(const hf_geom *g, const qz_quant *Q, const void *in,
                                unsigned long long *cost, cudaStream_t s);
/* The costs of count chunks of g at once: chunk k's quantiser Qs[k] and values ins[k] (device
 * arrays; Q0 on the host is any of them, for the element type), its costs at cost + 6 k. */
cudaError_t hf_axes_launch_cost_many(const hf_geom *g, const qz_quant *Q0, const qz_quant *Qs,
                                     const void *const *ins, unsigned count,
                                     unsigned long long *cost, cudaStream_t s);
cudaError_t hf_axes_launch_copy(const hf_geom *g, unsigned axes, int is_f32, int gather,
                                const void *src, void *dst, int sms, cudaStream_t s);

/* One chunk's copy between it and its coded array, for hf_axes_launch_copy_many. */
typedef struct hf_axes_job {
    const void *src;
    void *dst;
    unsigned axes;
} hf_axes_job;

/* The copies of count chunks of the geometry g (one element type, one direction) in one
 * launch: jobs in device memory, hjobs the same on the host (it sizes the grid). */
cudaError_t hf_axes_launch_copy_many(const hf_geom *g, const hf_axes_job *hjobs,
                                     const hf_axes_job *jobs, unsigned count, int is_f32,
                                     int gather, int sms, cudaStream_t s);

#endif
