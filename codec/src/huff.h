/* The Huffman codec (codec 2), CPU reference: the specification the CUDA kernels match byte for
 * byte. Payload layout: docs/FORMAT.md, "Huffman payload". */
#ifndef H5ZGPU_HUFF_H
#define H5ZGPU_HUFF_H

#include "fixed.h"
#include "huff_common.h"
#include "h5zgpu.h"

#include <stddef.h>

/* Lays the tile grid over the chunk folded to at most 3-D. Returns -1 if the shape is empty or
 * has 2^32 elements or more (positions in the payload are 32-bit). */
int hf_geom_init(hf_geom *g, unsigned rank, const uint64_t *dims);

/* The radius a caller asked for: 0 means the default; else 2..HF_RADIUS_MAX. */
unsigned hf_radius(unsigned asked);

/* Encodes into out[0..cap) with the quantiser Q (fl_quant_init, as the fixed-length codec);
 * H5ZGPU_E_OUTPUT_TOO_SMALL when the payload would not fit (the caller then stores it raw). */
h5zgpu_status hf_encode_cpu(const hf_geom *g, const fl_quant *Q, unsigned radius, const void *in,
                            uint8_t *out, uint64_t cap, uint64_t *len);

/* Decodes a payload of exactly len bytes; every count, code, length and position is checked
 * before use (H5ZGPU_E_CORRUPT). Q supplies eb_abs, the mode and fill from the chunk header. */
h5zgpu_status hf_decode_cpu(const hf_geom *g, fl_quant *Q, const uint8_t *in, uint64_t len,
                            void *out);

/* The parts of a Huffman payload, located from its fixed part and codebook (the first avail
 * bytes, at most HF_HEAD_MAX are read) and its length: the host side of either decoder. The
 * sub-chunk table and the stream are checked by the decoder that reads them. table receives the
 * decoder table (2^HF_MAX_LEN entries). */
#define HF_HEAD_MAX (HF_OFF_CODEBOOK + 4u + (HF_MAX_SYMS + 1u) / 2u)
typedef struct hf_layout {
    double base;
    unsigned form, order, radius, run_token, ntokens;
    uint32_t n_out, n_verb;
    uint64_t off_sub, off_stream, stream_bytes, off_out_pos, off_out_delta, off_verb_pos,
        off_verb_val;
} hf_layout;

h5zgpu_status hf_parse(const hf_geom *g, unsigned esize, const uint8_t *in, uint64_t avail,
                       uint64_t len, hf_layout *L, uint16_t *table);

#endif
