/* The fixed-length codec's launchers (cuda/fixed/), called by the backend in this order:
 * encoding fl_launch_encode then fl_launch_assemble; decoding hzc_launch_checksum (which counts
 * the block headers) then fl_launch_decode. */
#ifndef H5ZGPU_CUDA_FIXED_STAGES_H
#define H5ZGPU_CUDA_FIXED_STAGES_H

#include "../common/stages.h"

extern "C" {
#include "fixed.h"
}

/* Quantises, predicts and codes every tile of in: the tables (base, masks, predictors) and
 * block headers into tab, the block payloads into pay (paycap bytes), tile offsets through
 * the look-back words in status (2 ntiles, zeroed); sc->nhdr_total and sc->bytes_total get
 * the totals. */
cudaError_t fl_launch_encode(const fl_geom *g, const qz_quant *Q, const void *in, uint8_t *tab,
                             uint8_t *pay, uint64_t paycap, unsigned long long *status,
                             hzc_scalars *sc, cudaStream_t s);

/* Copies tables + headers (tab) and block payloads (pay) into place at dst and sums them into
 * sc->sum, when the total fits cap bytes. */
cudaError_t fl_launch_assemble(const uint8_t *tab, const uint8_t *pay, uint8_t *dst,
                               uint64_t cap, uint64_t tables, hzc_scalars *sc, int sms,
                               cudaStream_t s);

/* Decodes len payload bytes at in into out, given sc->nhdr_total (hzc_launch_checksum's
 * count); an invalid payload sets sc->corrupt. status: 2 ntiles look-back words, zeroed. */
cudaError_t fl_launch_decode(const fl_geom *g, const qz_quant *Q, const uint8_t *in,
                             uint64_t len, void *out, unsigned long long *status,
                             hzc_scalars *sc, cudaStream_t s);

#endif
