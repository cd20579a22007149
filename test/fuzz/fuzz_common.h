/* Pieces the libFuzzer targets share: the documented checksum, the decoder check every target
 * runs, and the valid chunks the payload target starts from. */
#ifndef H5ZGPU_FUZZ_COMMON_H
#define H5ZGPU_FUZZ_COMMON_H

#include "h5zgpu.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A broken invariant: libFuzzer keeps the input and reports a crash. */
#define FZ_REQUIRE(cond, ...)                                                                   \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "h5zgpu fuzz: " __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                                \
            abort();                                                                            \
        }                                                                                       \
    } while (0)

/* Chunks claiming more than this are decoded into a small buffer (which must be refused), so
 * one input never allocates more. */
#define FZ_MAX_RAW (UINT64_C(1) << 22)

/* Byte offsets of docs/FORMAT.md's header fields the targets rewrite. */
#define FZ_OFF_CHECKSUM 12u
#define FZ_OFF_PAYLOAD_LEN 32u

/* Rewrites the checksum of a chunk whose header is hlen bytes long (docs/FORMAT.md, "Checksum";
 * written from the document, not from codec/src, so the two are checked against each other). */
void fz_fix_checksum(uint8_t *chunk, size_t len, size_t hlen);

/* Decodes a chunk on the CPU and checks the API's promises: no crash or out-of-bounds access
 * (ASan), a refusal is an error status with a message, an accepted chunk fills exactly raw_len
 * bytes, and an output buffer one byte short is refused. */
void fz_decode_check(const uint8_t *chunk, size_t len);

/* Valid chunks of several shapes, element types, modes and payload kinds, made once. */
size_t fz_template_count(void);
const uint8_t *fz_template(size_t i, size_t *len, size_t *hlen);

#endif
