/* How a chunk is written, decided in one place for every entry point (host buffers on the CPU
 * or the GPU, device buffers, batches): which codec's payload to keep (auto: the smaller, the
 * fixed-length one on a tie), when to store the values raw instead, and the header in front.
 * A runner says where the payloads are made and where the bytes live. docs/FORMAT.md. */
#ifndef H5ZGPU_POLICY_H
#define H5ZGPU_POLICY_H

#include "h5zgpu.h"

#include <stddef.h>
#include <stdint.h>

/* One codec's payload as made. */
typedef struct hz_payload {
    uint64_t len;       /* bytes */
    double eb_abs;      /* the bound applied */
    uint32_t sum;       /* checksum sum (hz_sum) */
    int held_fill;      /* the chunk holds fill elements: the payload lies shift bytes further */
    uint64_t fill_bits; /* then the chunk's fill value (qz_choose_fill) */
} hz_payload;

typedef struct hz_runner hz_runner;
struct hz_runner {
    const h5zgpu_params *p;
    /* The payload of codec (1 or 2) at base, or base + shift when the chunk holds fill (known
     * only once the encoding has looked at the values), in at most cap bytes;
     * H5ZGPU_E_OUTPUT_TOO_SMALL when it needs more. With keep, a payload already there stays
     * unless the new one fits. res->held_fill and fill_bits are set even when too small. */
    h5zgpu_status (*encode)(const hz_runner *r, unsigned codec, uint8_t *base, uint64_t shift,
                            uint64_t cap, int keep, hz_payload *res);
    /* The chunk's values as they came at dst, and their checksum sum. */
    h5zgpu_status (*store_raw)(const hz_runner *r, uint8_t *dst, uint64_t raw, uint32_t *sum);
    /* The header's len bytes to the front of the chunk at dst. */
    h5zgpu_status (*put_header)(const hz_runner *r, uint8_t *dst, const uint8_t *hdr, size_t len);
    void *ctx;
};

/* Whether chunks of these parameters may hold the interpolation's values, which lie on a grid
 * finer than the codes': a rewritten chunk must then give such values back as they are. */
static inline int hz_keeps_fine_codes(const h5zgpu_params *p)
{
    return p->codec != H5ZGPU_CODEC_FIXED;
}

/* Writes the chunk of r->p (checked by the caller) into out (out_cap bytes, at least
 * h5zgpu_compress_bound). A fixed-ratio chunk is written as an ABS (or REL) chunk whose bound
 * brings its size nearest the target: the header records that bound. */
h5zgpu_status hz_write_chunk(const hz_runner *r, uint8_t *out, size_t out_cap, size_t *out_len);

#endif
