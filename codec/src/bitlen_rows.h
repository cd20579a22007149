/* hz_bitlen(hz_zigzag(d)) of a whole number d held exactly in a double (|d| < 2^52), or of an
 * int32, without branches, so that a CPU loop summing such costs vectorises (its file compiled
 * without floating-point traps). test/quant_rows_test.c holds both to the scalar form. */
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

/* The same of an int32 d, in int32 and float lanes (eight to a 256-bit vector where the
 * double's are four): bitlen(zigzag(d)) = bitlen(a) + (d != 0) with a = d ^ (d >> 31) < 2^31,
 * bitlen(a) from the biased exponent 126 + k of a float of k bits, exact below 2^24 (above,
 * a >> 7's and 7 more). */
HZ_INLINE unsigned hz_zigzag_bitlen_i32(int32_t d)
{
    const uint32_t a = (uint32_t)(d ^ (d >> 31));
    const uint32_t big = a >= (1u << 24);
    const float f = (float)(int32_t)(big ? a >> 7 : a);
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    const int k = (int)(b >> 23) - 126;   /* -126 for 0 */
    return (unsigned)((k > 0 ? k : 0) + (big ? 7 : 0) + (d != 0));
}

#endif
