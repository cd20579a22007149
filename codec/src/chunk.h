/* The chunk header every compressed chunk starts with, and the chunk checksum
 * (docs/FORMAT.md, "Chunk header"). */
#ifndef H5ZGPU_CHUNK_H
#define H5ZGPU_CHUNK_H

#include "h5zgpu.h"

#include <stddef.h>
#include <stdint.h>

#define HZ_HDR_FIXED 40u
#define HZ_HDR_MAX (HZ_HDR_FIXED + 4u * H5ZGPU_MAX_RANK + 8u)
#define HZ_OFF_CHECKSUM 12u
#define HZ_CODEC_RAW 0u
#define HZ_FLAG_FILL 1u   /* a fill value follows the dims */
/* The format version of every chunk this writer codes (not raw): version 3's quantiser grid,
 * which a rewrite of the chunk keeps, the Huffman codec's axis order and ANS form (version 4),
 * the ANS form's word counts of one or two bytes (version 5) and its built-in tables (version
 * 6; docs/FORMAT.md). Raw chunks stay version 1. */
#define HZ_VERSION_CODED 6u

typedef struct hz_header {
    unsigned version, codec, rank, flags;
    uint64_t fill_bits;   /* the fill value's bits in the element type (HZ_FLAG_FILL) */
    h5zgpu_dtype dtype;
    h5zgpu_mode mode;
    double eb, eb_abs;
    uint64_t payload_len;
    uint64_t dims[H5ZGPU_MAX_RANK];
} hz_header;

static inline size_t hz_header_len(unsigned rank, unsigned flags)
{
    return HZ_HDR_FIXED + 4u * rank + ((flags & HZ_FLAG_FILL) ? 8u : 0u);
}

static inline unsigned hz_esize(h5zgpu_dtype t)
{
    return t == H5ZGPU_FLOAT64 ? 8u : 4u;
}

/* The fill value of p in the element type's bits, zero-extended. */
uint64_t hz_fill_bits(const h5zgpu_params *p);

/* Element count of a shape, or 0 if it overflows 2^60. */
uint64_t hz_count(unsigned rank, const uint64_t *dims);

/* Writes the header with its checksum; payload_sum is hz_sum over the payload. */
void hz_header_write(uint8_t *out, const hz_header *h, uint32_t payload_sum);

/* Parses and validates a header against the chunk's length. Fills why on failure. */
h5zgpu_status hz_header_read(const uint8_t *in, size_t len, hz_header *h);

/* The same for a header read apart from its chunk: avail bytes of header at in, the whole chunk
 * len bytes long (device chunks, whose header is copied to the host alone). */
h5zgpu_status hz_header_parse(const uint8_t *in, size_t avail, size_t len, hz_header *h);

/* Sum of checksum terms over a byte string (the CPU side of the GPU's reduction). */
uint32_t hz_sum(const uint8_t *p, uint64_t n);

/* The checksum stored in a header, from the header bytes and the payload's sum. */
uint32_t hz_checksum(const uint8_t *hdr, size_t hlen, uint32_t payload_sum, uint64_t payload_len);

/* H5ZGPU_E_CORRUPT (with the message) unless the checksum stored in the header bytes hdr (read
 * into h) is that of the header and a payload whose sum is sum. */
h5zgpu_status hz_check_sum(const uint8_t *hdr, const hz_header *h, uint32_t sum);

#endif
