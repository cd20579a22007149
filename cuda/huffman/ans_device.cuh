/* What the ANS form's encoder (ans_encode.cu) and decoder (ans_decode.cu) share. */
#ifndef H5ZGPU_CUDA_HUFF_ANS_DEVICE_CUH
#define H5ZGPU_CUDA_HUFF_ANS_DEVICE_CUH

#include "huff_device.cuh"

#include "huff_ans.h"

#define HF_ANS_THREADS 128   /* sub-chunk kernels: a thread a sub-chunk */

/* Shared memory of the tables' packed entries (frequency | cumulative << 16) for radius R;
 * the encoder keeps each entry's reciprocal beside it. */
static inline unsigned hf_ans_smem(unsigned R)
{
    return HF_ANS_TABLES * 2u * R * 4u;
}

static inline unsigned hf_ans_enc_smem(unsigned R)
{
    return 2u * hf_ans_smem(R);
}

/* The ANS kernels' dynamic shared memory limit: the largest any launch asks for (the
 * encoder's at the largest radius; the decoder's tables and buckets take less), the same on
 * every call, since threads decoding other chunks set it concurrently (a launch above the
 * limit another thread just set fails). */
#define HF_ANS_SMEM_MAX (HF_ANS_TABLES * 2u * HF_RADIUS_MAX * 8u)

/* hf_ans_class of a tile's elements by their index e in the tile, for tiles whose rows and
 * planes hold powers of two: each coordinate's parity is a bit of e (along an axis of one
 * element, the origin's). Spares the counts and the decoder a walk of the coordinates. Lorenzo's
 * masks and parities are all 0, which makes every element class 0 without a branch. */
struct hf_ans_cls {
    unsigned sy, sz, mx, my, mz, px, py, pz;
    __device__ __forceinline__ unsigned of(unsigned e) const
    {
        const unsigned x = (e & mx) ^ px, y = (e >> sy & my) ^ py, z = (e >> sz & mz) ^ pz;
        return x ? 3u : y ? 2u : z;
    }
};

/* The classes of tile T's elements, or false when its rows or planes are not powers of two. */
__device__ __forceinline__ bool hf_ans_cls_of(unsigned pred, const hf_tile &T, hf_ans_cls *c)
{
    if ((T.ex & (T.ex - 1u)) || (T.ey & (T.ey - 1u)))
        return false;
    const unsigned lx = __ffs(T.ex) - 1, ly = __ffs(T.ey) - 1;
    if (pred != HF_PRED_INTERP)
        *c = {lx, lx + ly, 0u, 0u, 0u, 0u, 0u, 0u};
    else
        *c = {lx, lx + ly, T.ex > 1 ? 1u : 0u, T.ey > 1 ? 1u : 0u, 1u, (unsigned)(T.x0 & 1u),
              (unsigned)(T.y0 & 1u), (unsigned)(T.z0 & 1u)};
    return true;
}

#endif
