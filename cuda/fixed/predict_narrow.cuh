/* The fixed-length predictors (fixed_common.h's fl_predict_at) in 32-bit arithmetic, for the
 * encoder's blocks without fill elements, each element's neighbours read once for all of them.
 *
 * Why it is exact: every code a quantiser gives has |q| <= 2^28 (QZ_QMAX), so every prediction
 * from such codes lies within 7 x 2^28 < 2^31 (Lorenzo adds seven neighbours; the mean of
 * three, planar three) and is the int32 value of the 64-bit one. A residual q - p lies within
 * 2^31: the same modulo 2^32 gives its magnitude (2^31 for both -2^31 and 2^31) and whether it
 * is zero, which is all the block statistics need; the payload's residuals are taken in 64 bits
 * from the 32-bit prediction. Blocks with fill elements predict from predictions, which these
 * bounds do not cover, and stay with the 64-bit functions. */
#ifndef H5ZGPU_CUDA_FIXED_PREDICT_NARROW_CUH
#define H5ZGPU_CUDA_FIXED_PREDICT_NARROW_CUH

#include "fixed_device.cuh"

/* The mean predictor's value from the sum of an element's k neighbours (fl_predict_at's):
 * floor((sum + k / 2) / k) for k = 2 and 3, fl_mean_round's value, else the sum. Without
 * branches: a warp's lanes have all three k, and each branch ran for all of them. */
__device__ __forceinline__ uint32_t mean_narrow(uint32_t sum, unsigned k)
{
    const int32_t s = (int32_t)(sum + (k >> 1));
    const uint32_t m = (uint32_t)(s >> 31);   /* all ones below 0, where floor(s / 3) is */
    const uint32_t d3 = ((uint32_t)s ^ m) / 3u ^ m;   /* -(~s / 3) - 1, in unsigned division */
    return k == 3 ? d3 : k == 2 ? (uint32_t)(s >> 1) : sum;
}

/* Element e's neighbours inside its block (q: the block's codes), 0 outside: x-1, y-1, z-1 and
 * the diagonal ones. */
struct nbrs_narrow {
    uint32_t a, b, c, ab, ac, bc, abc;
};

template <int DIM>
__device__ __forceinline__ nbrs_narrow neighbours_narrow(const int32_t *q, unsigned e)
{
    typedef blk_shape<DIM> S;
    const unsigned x = e % S::BX, y = (e / S::BX) % S::BY, z = e / (S::BX * S::BY);
    const unsigned sy = S::BX, sz = S::BX * S::BY;
    nbrs_narrow n;
    n.a = x ? (uint32_t)q[e - 1] : 0u;
    n.b = y ? (uint32_t)q[e - sy] : 0u;
    n.c = z ? (uint32_t)q[e - sz] : 0u;
    n.ab = x && y ? (uint32_t)q[e - sy - 1] : 0u;
    n.ac = x && z ? (uint32_t)q[e - sz - 1] : 0u;
    n.bc = y && z ? (uint32_t)q[e - sz - sy] : 0u;
    n.abc = x && y && z ? (uint32_t)q[e - sz - sy - 1] : 0u;
    return n;
}

/* Prediction of element e under predictor pred: fl_predict_at's, from its neighbours. */
template <int DIM>
__device__ __forceinline__ int32_t predict_narrow(unsigned pred, const nbrs_narrow &n, unsigned e)
{
    typedef blk_shape<DIM> S;
    const unsigned x = e % S::BX, y = (e / S::BX) % S::BY, z = e / (S::BX * S::BY);
    const uint32_t chain = x ? n.a : (y ? n.b : n.c);
    uint32_t p;
    if (pred == FL_PRED_LORENZO) {
        p = n.a + n.b + n.c - n.ab - n.ac - n.bc + n.abc;
    } else if (pred == FL_PRED_MEAN) {
        p = mean_narrow(n.a + n.b + n.c, (x > 0) + (y > 0) + (z > 0));
    } else if (pred == FL_PRED_CHAIN || (x == 0 && y == 0)) {
        p = chain;
    } else {   /* planar */
        p = n.a + n.b - n.ab;
    }
    return (int32_t)p;
}

#endif
