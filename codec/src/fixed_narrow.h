/* The fixed-length predictions in 32-bit arithmetic, for the CPU encoder's vectorised loops over
 * a block without fill elements (fixed_cpu.c). Each prediction is the int32 value of
 * fl_predict_at's: codes lie within 2^28 and predictions within 7 x 2^28 (FL_MAG_MAX). */
#ifndef H5ZGPU_FIXED_NARROW_H
#define H5ZGPU_FIXED_NARROW_H

#include "fixed_common.h"

/* Zero codes before a block's first element in the 32-bit copies below, so that every
 * neighbour a prediction reads lies in the buffer: the farthest is 1-D's x-1, y-1, z-1 (129
 * back). */
#define FL_NARROW_PAD 136

/* Element e's four predictions (c32: the block's codes, e >= 1, after FL_NARROW_PAD codes),
 * with the shape a constant: neighbours outside the block are masked and the mean's floor
 * division is done in unsigned arithmetic, so that a loop over the elements vectorises. */
HZ_INLINE void predict_narrow(unsigned bx, unsigned by, const int32_t *c32, unsigned e,
                              uint32_t pr[FL_NPRED])
{
    const unsigned sy = bx, sz = bx * by, x = e % bx, y = e / bx % by, z = e / sz;
    const uint32_t mx = x ? ~0u : 0u, my = y ? ~0u : 0u, mz = z ? ~0u : 0u;
    const uint32_t *p = (const uint32_t *)c32 + e;
    const uint32_t a = p[-1] & mx, b = p[-(int)sy] & my, c = p[-(int)sz] & mz;
    const uint32_t ab = p[-(int)sy - 1] & mx & my, ac = p[-(int)sz - 1] & mx & mz;
    const uint32_t bc = p[-(int)(sz + sy)] & my & mz, abc = p[-(int)(sz + sy) - 1] & mx & my & mz;
    const uint32_t corner = c & ~mx & ~my;   /* x = y = 0: chain and planar take z-1 */
    /* the mean: floor((s + k/2) / k) over the k neighbours; |s| <= 3 x 2^28, so adding
     * 3 x 2^29 makes the dividend of 3 positive without overflow */
    const unsigned k = (mx & 1u) + (my & 1u) + (mz & 1u);
    const uint32_t s = a + b + c, t = s + k / 2;
    const uint32_t half = (uint32_t)((int32_t)t >> 1);
    const uint32_t third = (t + 3u * (1u << 29)) / 3u - (1u << 29);
    pr[FL_PRED_LORENZO] = a + b + c - ab - ac - bc + abc;
    pr[FL_PRED_CHAIN] = a | (b & ~mx) | corner;
    pr[FL_PRED_MEAN] = k == 3 ? third : (k == 2 ? half : s);
    pr[FL_PRED_PLANAR] = a + b - ab + corner;
}

/* |r| of a residual within 2^31 from its value modulo 2^32 (2^31 for both signs). */
HZ_INLINE uint32_t magnitude_narrow(uint32_t r)
{
    return (int32_t)r < 0 ? 0u - r : r;
}

#endif
