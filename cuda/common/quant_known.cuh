/* A chunk's quantiser with what is known of it as constants the compiler folds. Encoding: the
 * element type, format version 3's grid and fraction bits, which every encoding's quantiser
 * (qz_init) holds. Decoding: the element type, and those of the grid where a launch's chunks
 * are all of version 3 or later. LIN: the mode is ABS or REL, which drops PWREL's branches.
 * Device code only. */
#ifndef H5ZGPU_CUDA_QUANT_KNOWN_CUH
#define H5ZGPU_CUDA_QUANT_KNOWN_CUH

extern "C" {
#include "quant.h"
}

template <typename T, bool LIN>
__device__ __forceinline__ qz_quant qz_encoding(const qz_quant &Q)
{
    qz_quant K = Q;
    K.is_f32 = sizeof(T) == 4;
    K.grid = 1;
    K.fine = QZ_FINE_BITS;
    if (LIN)
        K.pwrel = 0;
    return K;
}

/* LIN here: ABS or REL on version 3's grid (qz_linear_v3), which every decoding but PWREL's
 * and versions 1-2's holds. */
template <typename T, bool LIN>
__device__ __forceinline__ qz_quant qz_decoding(const qz_quant &Q)
{
    qz_quant K = Q;
    K.is_f32 = sizeof(T) == 4;
    if (LIN) {
        K.pwrel = 0;
        K.grid = 1;
        K.fine = QZ_FINE_BITS;
    }
    return K;
}

#endif
