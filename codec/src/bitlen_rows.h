/* hz_bitlen(hz_zigzag(d)) of a whole number d held exactly in a double (|d| < 2^52), without
 * branches or integer conversions, so that a CPU loop summing such costs vectorises (its file
 * compiled without floating-point traps). test/quant_rows_test.c holds it to the scalar form. */
#ifndef H5ZGPU_BITLEN_ROWS_H
#define H5ZGPU_BITLEN_ROWS_H

#include "portable.h"

#include <stdint.h>
#include <string.h>

/* The zigzag, 2d or -2d - 1, is exact; its biased exponent is 1023 + k for 2^k <= zz < 2^(k+1),
 * whose bit length is k + 1 (zz = 0: 0). */
HZ_INLINE unsigned hz_zigzag_bitlen_f64(double d)
{
    const double zz = d >= 0.0 ? hz_add(d, d) : hz_sub(hz_mul(-2.0, d), 1.0);
    uint64_t b;
    memcpy(&b, &zz, sizeof b);
    return zz == 0.0 ? 0u : (unsigned)(b >> 52) - 1022u;
}

#endif
