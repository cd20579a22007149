/* The axis order's term (hf_axes_term, huff_axes.h) without branches or integer conversions,
 * CPU only, in the manner of quant_rows.h: the same bit length for every input, in a form the
 * compiler vectorises (the file that calls it is compiled without floating-point traps).
 * test/quant_rows_test.c holds the two to the same results. */
#ifndef H5ZGPU_HUFF_AXES_ROWS_H
#define H5ZGPU_HUFF_AXES_ROWS_H

#include "bitlen_rows.h"
#include "huff_axes.h"

/* hf_axes_term(t0, t1, t2, t3, t4), the rounded difference d (|d| < 2^30) kept in a double. */
HZ_INLINE unsigned hf_axes_term_lane(double t0, double t1, double t2, double t3, double t4)
{
    const double pred = hz_mul(hz_sub(hz_mul(9.0, hz_add(t1, t3)), hz_add(t0, t4)), 0.0625);
    const double d = rint(hz_mul(hz_sub(t2, pred), 16.0));
    const int in = (d < 1073741824.0) & (d > -1073741824.0);   /* false for NaN */
    const unsigned len = hz_zigzag_bitlen_f64(in ? d : 0.0);
    return in ? len : 31u;
}

#endif
