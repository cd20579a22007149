/* A fixed-length block's codes from its residuals as sums along its axes, modulo 2^64, for the
 * CPU decoder (fixed_cpu.c). Lorenzo's prediction is the inclusion-exclusion of the codes below
 * an element, so its codes are the residuals summed along x, y and z in turn; chain's are sums
 * along its path (z down the first column's corners, y down the first column, x along each
 * row); planar's the corners' sums along z, then Lorenzo's in each plane. These are the values
 * fl_predict_at's element-by-element reconstruction gives for any residuals (damaged payloads
 * included), in loops over rows of elements that vectorise. The mean rounds and has none. */
#ifndef H5ZGPU_FIXED_SUMS_H
#define H5ZGPU_FIXED_SUMS_H

#include "fixed_common.h"

/* Sums along x in each of the block's rows. */
HZ_INLINE void fl_sum_x(uint64_t *q, unsigned bz, unsigned by, unsigned bx)
{
    for (unsigned row = 0; row < bz * by; row++)
        for (unsigned x = 1; x < bx; x++)
            q[row * bx + x] += q[row * bx + x - 1];
}

/* Sums along y in each plane, over the first w elements of each row (w = bx: all; 1: the first
 * column). */
HZ_INLINE void fl_sum_y(uint64_t *q, unsigned bz, unsigned by, unsigned bx, unsigned w)
{
    for (unsigned z = 0; z < bz; z++)
        for (unsigned y = 1; y < by; y++)
            for (unsigned x = 0; x < w; x++)
                q[(z * by + y) * bx + x] += q[(z * by + y - 1) * bx + x];
}

/* Sums along z over the first w elements of each plane (w = by bx: all; 1: the corners). */
HZ_INLINE void fl_sum_z(uint64_t *q, unsigned bz, unsigned by, unsigned bx, unsigned w)
{
    for (unsigned z = 1; z < bz; z++)
        for (unsigned i = 0; i < w; i++)
            q[z * by * bx + i] += q[(z - 1) * by * bx + i];
}

/* The codes of a block of bz x by x bx elements under pred (not the mean), in place: q holds
 * the residuals on entry. */
HZ_INLINE void fl_reconstruct_sums(unsigned pred, unsigned bz, unsigned by, unsigned bx,
                                   uint64_t *q)
{
    if (pred == FL_PRED_LORENZO) {
        fl_sum_z(q, bz, by, bx, by * bx);
        fl_sum_y(q, bz, by, bx, bx);
        fl_sum_x(q, bz, by, bx);
    } else if (pred == FL_PRED_CHAIN) {
        fl_sum_z(q, bz, by, bx, 1);
        fl_sum_y(q, bz, by, bx, 1);
        fl_sum_x(q, bz, by, bx);
    } else { /* planar */
        fl_sum_z(q, bz, by, bx, 1);
        fl_sum_y(q, bz, by, bx, bx);
        fl_sum_x(q, bz, by, bx);
    }
}

#endif
