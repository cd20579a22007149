/* The value contract of h5zgpu_decompress(h5zgpu_compress(x)), shared by the property test and the
 * round-trip fuzzer:
 *   ABS   |x' - x| <= eb
 *   REL   |x' - x| <= eb x (max - min) over the chunk's finite values
 *   PWREL |x' - x| <= eb x |x|, and a zero decodes to a zero
 *   eb = 0: finite values bit-exact; NaN and +-Inf always bit-exact.
 * With a fill value (p->has_fill), elements whose bits equal it in the element type come back
 * bit for bit and are left out of the REL range. Checked in double precision. -0.0 for +0.0 and
 * other values inside the bound are allowed. The chunk's header carries the chunk's fill value
 * (hc_chunk_fill): the declared one, or a NaN where NaN of other bits outnumber it. */
#ifndef H5ZGPU_TEST_CONTRACT_H
#define H5ZGPU_TEST_CONTRACT_H

#include "h5zgpu.h"

#include <stddef.h>
#include <stdint.h>

/* The range of the chunk's finite values that are not fill: any = 0 when there is none (range
 * is then 0); nfill counts the fill elements, nnan the NaN elements that are not fill, and
 * nan_bits holds the first of those. */
typedef struct hc_range {
    int any;
    double lo, hi, range;
    size_t nfill, nnan;
    uint64_t nan_bits;
} hc_range;

/* Whether element i's bits equal p's fill value's in the element type. */
int hc_is_fill(const h5zgpu_params *p, const void *a, size_t i);

hc_range hc_finite_range(const h5zgpu_params *p, const void *a, size_t n);

/* Whether the chunk's header carries a fill value (FORMAT.md, "Fill values"), and its bits:
 * the declared fill value when no fewer elements hold it than hold NaN of other bits, else the
 * first of those NaN. */
int hc_chunk_fill(const h5zgpu_params *p, const hc_range *r, uint64_t *bits);

/* Number of decoded values that break the contract; describes the first one in why. */
uint64_t hc_check_values(const h5zgpu_params *p, const void *in, const void *out, size_t n,
                         const hc_range *r, char *why, size_t whylen);

/* The eb_abs FORMAT.md says a chunk's header records: ABS eb, REL the largest power of two not
 * above eb x range, PWREL eb, and 0 for a chunk stored raw (codec 0). */
double hc_expected_eb_abs(const h5zgpu_params *p, unsigned codec, const hc_range *r);

/* The format version FORMAT.md says a chunk's header records: 1 for a chunk stored raw, else 5. */
unsigned hc_expected_version(unsigned codec);

#endif
