/* The fixed-length codec (codec 1), CPU reference: the specification the CUDA kernels match
 * byte for byte. Payload layout: docs/FORMAT.md, "Fixed-length payload". */
#ifndef H5ZGPU_FIXED_H
#define H5ZGPU_FIXED_H

#include "fixed_common.h"
#include "h5zgpu.h"

#include <stddef.h>

/* Offsets of the payload's fixed-position parts. */
#define FL_OFF_BASE 0
#define FL_OFF_MASKS 8

/* Folds a chunk shape to 3-D (hz_fold_dims) and lays the block grid over it. Returns 0 on
 * success, -1 if the shape is empty. */
int fl_geom_init(fl_geom *g, unsigned rank, const uint64_t *dims);

/* Bytes before the block headers: base, tile masks, tile predictors, and with a fill value the
 * tile fill masks. */
HZ_HD uint64_t fl_tables_size(const fl_geom *g, int has_fill)
{
    return FL_OFF_MASKS + (has_fill ? 9u : 5u) * g->ntiles;
}

/* Largest payload the encoder can produce: every block raw. */
uint64_t fl_payload_bound(const fl_geom *g, unsigned esize, int has_fill);

/* Encodes into out[0..cap); returns H5ZGPU_E_OUTPUT_TOO_SMALL when the payload would not fit
 * (the caller then stores the chunk raw). */
h5zgpu_status fl_encode_cpu(const fl_geom *g, const qz_quant *Q, const void *in, uint8_t *out,
                            uint64_t cap, uint64_t *len);

/* Decodes a payload of exactly len bytes into n elements; every length, code and offset is
 * checked before use (H5ZGPU_E_CORRUPT). Q comes from qz_decoder and the chunk header's
 * fill value; the payload gives its base or code offset. */
h5zgpu_status fl_decode_cpu(const fl_geom *g, qz_quant *Q, const uint8_t *in, uint64_t len,
                            void *out);

#endif
