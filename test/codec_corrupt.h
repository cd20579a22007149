/* What codec_corrupt.c and corrupt_hand.c share: the Huffman payload's offsets (docs/FORMAT.md,
 * "Huffman payload"), little-endian fields, and the NaN and infinities the samples carry. */
#ifndef H5ZGPU_TEST_CODEC_CORRUPT_H
#define H5ZGPU_TEST_CODEC_CORRUPT_H

#include "util.h"

#include <stdlib.h>
#include <string.h>

#define HZ_OFF_PAYLOAD_LEN 32u
#define HP_OFF_FORM 8u
#define HP_OFF_ORDER 9u
#define HP_OFF_RADIUS 10u
#define HP_OFF_RUN_TOKEN 12u
#define HP_OFF_RESERVED 14u      /* the axis order (format version 4), then a reserved byte */
#define HP_OFF_N_OUT 16u
#define HP_OFF_N_VERB 20u
#define HP_OFF_CODEBOOK 24u      /* u16 m0, u16 m1, then m0 + m1 nibbles */
#define HP_OFF_LENGTHS 28u
#define HP_SUB 4096u
#define HP_RUN_MAX 256u
#define HP_MAX_LEN 15u
#define HP_PAIR_MIN_RADIUS 9u
#define HP_MAX_SYMS (2u * 1024u + HP_RUN_MAX)

static inline uint32_t get_le(const uint8_t *p, unsigned bytes)
{
    uint32_t v = 0;
    for (unsigned b = 0; b < bytes; b++)
        v |= (uint32_t)p[b] << (8 * b);
    return v;
}

static inline void put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned b = 0; b < bytes; b++)
        p[b] = (uint8_t)(v >> (8 * b));
}

static inline size_t pad4(size_t v)
{
    return (v + 3) & ~(size_t)3;
}

static const uint32_t nan_inf32[] = {0x7FC00001u, 0x7F800000u, 0xFF800000u};
static const uint64_t nan_inf64[] = {0x7FF8000000000001u, 0x7FF0000000000000u,
                                     0xFFF0000000000000u};

/* Payloads built by hand from docs/FORMAT.md (corrupt_hand.c). */
void hand_built(void);

#endif
