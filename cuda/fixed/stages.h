/* The fixed-length codec's launchers (cuda/fixed/), called by the backend in this order:
 * encoding fl_launch_encode then fl_launch_assemble; decoding hzc_launch_checksum_batch (which
 * counts the block headers) then fl_launch_decode. Each launch takes any number of chunks of
 * one geometry. */
#ifndef H5ZGPU_CUDA_FIXED_STAGES_H
#define H5ZGPU_CUDA_FIXED_STAGES_H

#include "../common/stages.h"

extern "C" {
#include "fixed.h"
}

/* One chunk of an encoding launch: a chunk alone is a batch of one. The arrays live in device
 * memory; the chunks share the geometry g. */
typedef struct fl_enc_job {
    qz_quant Q;                  /* the chunk's quantiser */
    const void *in;              /* its values */
    uint8_t *tab;                /* base | masks | predictors | header bytes */
    uint8_t *pay;                /* block payloads, from offset 0 */
    uint64_t paycap;             /* bytes pay may take */
    unsigned long long *status;  /* 2 ntiles look-back words, zeroed */
    uint8_t *dst;                /* the assembled payload */
    uint64_t cap;                /* bytes dst may take */
    uint64_t tables;             /* fl_tables_size of the chunk */
} fl_enc_job;

/* Quantises, predicts and codes every tile of count chunks: each chunk's tables (base, masks,
 * predictors) and block headers into its tab, block payloads into its pay, tile offsets
 * through its look-back words; sc[c].nhdr_total and bytes_total get chunk c's totals
 * (sc[0].ticket numbers the tiles of all). The jobs are the count at jobs (device memory), or
 * the one at one (host memory; count is then 1). pwrel: the chunks' mode is PWREL (else ABS or
 * REL, every chunk alike). */
cudaError_t fl_launch_encode(const fl_geom *g, int is_f32, int pwrel, const fl_enc_job *jobs,
                             const fl_enc_job *one, unsigned count, hzc_scalars *sc,
                             cudaStream_t s);

/* Copies each chunk's tables + headers (tab) and block payloads (pay) into place at its dst and
 * sums them into sc[c].sum, when the total fits its cap; cap: the largest of the chunks'. Jobs
 * as fl_launch_encode's. */
cudaError_t fl_launch_assemble(const fl_enc_job *jobs, const fl_enc_job *one, unsigned count,
                               uint64_t cap, hzc_scalars *sc, int sms, cudaStream_t s);

/* One chunk of a decoding launch, as fl_enc_job. */
typedef struct fl_dec_job {
    qz_quant Q;                  /* the chunk's decoder (qz_decoder, its fill) */
    const uint8_t *in;           /* the payload */
    uint64_t len;                /* its bytes, at least fl_tables_size */
    void *out;                   /* the values */
    unsigned long long *status;  /* 2 ntiles look-back words, zeroed */
} fl_dec_job;

/* Decodes count payloads, given sc[c].nhdr_total (the checksum pass's count of chunk c's block
 * headers); an invalid payload sets its sc[c].corrupt. lin: every chunk's mode is ABS or REL
 * and its format version 3 or later. Jobs as fl_launch_encode's. */
cudaError_t fl_launch_decode(const fl_geom *g, int is_f32, int lin, const fl_dec_job *jobs,
                             const fl_dec_job *one, unsigned count, hzc_scalars *sc,
                             cudaStream_t s);

#endif
