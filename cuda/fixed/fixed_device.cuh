/* What the fixed-length codec's encoder and decoder kernels share: the CTA shape and the
 * block shapes by dimensionality. One CTA a tile, one warp a block at a time, two elements a
 * lane (e = lane and lane + 32). */
#ifndef H5ZGPU_CUDA_FIXED_DEVICE_CUH
#define H5ZGPU_CUDA_FIXED_DEVICE_CUH

#include "../common/device.cuh"
#include "../common/lookback.cuh"
#include "stages.h"

/* 256 threads a CTA: 8 warps of 4 blocks each cover one tile of FL_TILE blocks. */
#define FL_THREADS 256

/* CTAs an SM must hold at once: the register budget that buys them. The kernels are bound by
 * instruction issue, and at 4 CTAs (53 and 64 registers) a quarter of the cycles had no warp
 * ready; 6 CTAs made the encoder 5.7% faster and 5 the decoder 3.1% (H100, six 512^3 fields). */
#define FL_ENC_CTAS_PER_SM 6
#define FL_DEC_CTAS_PER_SM 5
#define FL_WARPS (FL_THREADS / 32)
#define FL_BLOCKS_PER_WARP (FL_TILE / FL_WARPS)
#define HDR_CODED_MAX (4u + 8u + 8u * FL_MAX_PLANES)   /* corner + sign + 32 planes */

template <int DIM> struct blk_shape;
template <> struct blk_shape<3> { enum { BX = 4, BY = 4, BZ = 4, NP = 4 }; };
template <> struct blk_shape<2> { enum { BX = 8, BY = 8, BZ = 1, NP = 3 }; };
template <> struct blk_shape<1> { enum { BX = 64, BY = 1, BZ = 1, NP = 1 }; };

/* Element positions in the index type I of a kernel: 32 bits where the chunk has at most
 * FL_POS32_MAX elements (a 64-bit multiply-add takes several instructions; a block's elements
 * past the edge then still compare below 2^32), else 64. A build with -DFL_POS32_MAX=0 runs
 * every chunk through the 64-bit kernels (scripts/device/suite.sh wide). */
#ifndef FL_POS32_MAX
#define FL_POS32_MAX ((uint64_t)INT32_MAX)
#endif

__host__ __device__ inline bool fl_pos32(const fl_geom &g)
{
    return g.nz * g.ny * g.nx <= FL_POS32_MAX;
}

/* The chunk's extent in I. */
template <typename I> struct extent {
    I nz, ny, nx;
    __device__ explicit extent(const fl_geom &g) : nz((I)g.nz), ny((I)g.ny), nx((I)g.nx) {}
};

/* Element e of the block at (z0, y0, x0): whether it lies inside the chunk, and its index. */
template <int DIM, typename I>
__device__ __forceinline__ bool elem_index(const extent<I> &n, I z0, I y0, I x0, unsigned e,
                                           I *idx)
{
    typedef blk_shape<DIM> S;
    const I x = x0 + e % S::BX, y = y0 + (e / S::BX) % S::BY, z = z0 + e / (S::BX * S::BY);
    *idx = (z * n.ny + y) * n.nx + x;
    return x < n.nx && y < n.ny && z < n.nz;
}

/* The origins of a warp's blocks (first, first + 1, ...), lane k computing block k's, as
 * fl_block_origin does: one division sequence a warp rather than one a block; block_origin
 * hands block k's to the whole warp. */
template <typename I> struct warp_origins {
    I z, y, x;
};

template <typename I>
__device__ __forceinline__ warp_origins<I> warp_block_origins(const fl_geom &g, uint64_t first,
                                                              unsigned lane)
{
    warp_origins<I> o = {0, 0, 0};
    if (lane < FL_BLOCKS_PER_WARP && first + lane < g.nblocks) {
        const I b = (I)(first + lane), gbx = (I)g.gbx, gby = (I)g.gby, t = b / gbx;
        o.x = b % gbx * (I)g.bx;
        o.y = t % gby * (I)g.by;
        o.z = t / gby * (I)g.bz;
    }
    return o;
}

template <typename I>
__device__ __forceinline__ void block_origin(const warp_origins<I> &o, unsigned k, I *z0, I *y0,
                                             I *x0)
{
    *z0 = __shfl_sync(FULL, o.z, k);
    *y0 = __shfl_sync(FULL, o.y, k);
    *x0 = __shfl_sync(FULL, o.x, k);
}

#endif
