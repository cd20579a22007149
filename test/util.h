/* Shared pieces of the C tests: deterministic inputs, the bound check, the documented checksum. */
#ifndef H5ZGPU_TEST_UTIL_H
#define H5ZGPU_TEST_UTIL_H

#include "h5zgpu.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Input patterns. Built from +, -, *, / and integer hashing only, so every platform makes the
 * same bits (the golden files depend on it). */
typedef enum tu_pattern {
    TU_SMOOTH,   /* a smooth field of the indices, both signs */
    TU_NOISE,    /* uniform in [-1, 1) */
    TU_SPECIAL,  /* smooth with NaN, +-Inf, -0, subnormals and the largest finite value mixed in */
    TU_HUGE,     /* smooth scaled to about 1e30 */
    TU_BITS,     /* random finite bit patterns: incompressible */
    TU_CONSTANT, /* every value 3.25 */
    TU_LAND,     /* smooth, with bands of -1e34 (a land fill value) over about a third */
    /* Patterns of the shape (tu_fill_shape; tu_fill gives them a 1-D shape): */
    TU_FIELD,    /* smooth along every axis, with terms that couple the two fastest axes and the
                  * slowest with the fastest: Lorenzo of the shape's dimensionality wins */
    TU_MASKED,   /* TU_FIELD with -1e34 over about 60% in patches, and NaN, +-Inf, -0, a
                  * subnormal and the largest finite value mixed in as TU_SPECIAL does */
    TU_SPIKY,    /* TU_FIELD with a spike of +-1e4 on about one element in 50 */
    TU_NAN_MASKED /* TU_FIELD with NaN over TU_MASKED's patches (xarray's missing values) */
} tu_pattern;

uint64_t tu_count(const h5zgpu_params *p);
size_t tu_esize(h5zgpu_dtype t);

/* Fills n elements of type t with a pattern; seed varies the pattern. */
void tu_fill(h5zgpu_dtype t, size_t n, tu_pattern pat, uint64_t seed, void *out);

/* Fills the elements of p's shape and type; patterns of the shape follow its coordinates. */
void tu_fill_shape(const h5zgpu_params *p, tu_pattern pat, uint64_t seed, void *out);

/* Element i as a double. */
double tu_get(h5zgpu_dtype t, const void *a, size_t i);
/* Stores v, rounded to type t, as element i of a. */
void tu_put(h5zgpu_dtype t, void *a, size_t i, double v);

/* Fill elements among quantisation codes at the quantiser's limit: p becomes a fixed-length
 * chunk of side^3 elements of type t at ABS 0.5 (a step of 1) with fill value -9999, and out
 * gets codes -2^28, 0 and 2^28 among fill elements. Fill elements take their predictions, which
 * Lorenzo and planar then grow past the 32 planes a block holds. Trials 0 and 1 at side 4 are
 * two blocks that came back wrong when a tile could use such a predictor; the others are random
 * layouts drawn from *state. */
void tu_fill_code_limit(h5zgpu_params *p, h5zgpu_dtype t, unsigned side, unsigned trial,
                        uint64_t *state, void *out);

/* Checks every value of `got` against `want` under the bound of mode/eb, in double precision;
 * non-finite values must match bit for bit. Returns the number of misses; describes the first
 * one in why. */
size_t tu_check_bound(h5zgpu_dtype t, h5zgpu_mode mode, double eb, const void *want,
                      const void *got, size_t n, char *why, size_t whylen);

/* Decompresses chunk (len bytes, the compression of in under p) on the executor H5ZGPU_DEVICE
 * picks and records, under label, a failure of the call or any value outside the bound. */
void tu_expect_decodes(const h5zgpu_params *p, const void *in, const uint8_t *chunk, size_t len,
                       const char *label);

/* Recomputes a chunk's header checksum as docs/FORMAT.md defines it (so a test can change a byte
 * and still reach the decoder's other checks). Returns the checksum written. */
uint32_t tu_fix_checksum(uint8_t *chunk, size_t len);

/* The same with the header length given (fuzzers that mutate the header's own fields). */
#define TU_MAX_HEADER (40 + 4 * 255 + 8)
uint32_t tu_fix_checksum_at(uint8_t *chunk, size_t len, size_t hlen);

uint64_t tu_fnv1a(const void *p, size_t n);

/* One number of the Huffman payload's ANS tables at nibble *k (docs/FORMAT.md, "ANS form"). */
uint32_t tu_nib_read(const uint8_t *p, size_t *k);

/* xorshift64: the next of a test's deterministic random numbers, from *state (not 0). */
uint64_t tu_xorshift(uint64_t *state);

/* Test bookkeeping: tu_expect records a failure with a message; tu_done prints the summary and
 * gives the exit status. */
void tu_expect(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tu_done(const char *name);

#endif
