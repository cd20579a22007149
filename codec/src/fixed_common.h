/* The fixed-length codec's arithmetic, shared verbatim by the CPU reference (fixed_cpu.c) and
 * the CUDA kernels (cuda/fixed/): predictors, block sizes and block payload coding.
 * docs/FORMAT.md describes the bytes these functions produce. */
#ifndef H5ZGPU_FIXED_COMMON_H
#define H5ZGPU_FIXED_COMMON_H

#include "geom.h"
#include "quant.h"

/* 64 values a block: the widest plane that is one 64-bit word. Shapes by dimensionality:
 * 4x4x4, 8x8, 64. Measured on Nyx-like 512^3 fields, 4x4x4 blocks beat 1-D runs by 10-40%. */
#define FL_BLOCK 64
/* Blocks a tile: a tile shares one 32-bit mask of non-empty blocks and one predictor choice. */
#define FL_TILE 32
#define FL_MAX_PLANES 32
/* The largest residual magnitude a block codes (32 planes). Blocks without fill elements never
 * pass it: codes lie within 2^28 and predictions within 7 x 2^28. Fill elements take their
 * predictions, so under Lorenzo or planar a block's later predictions may grow past it; a tile
 * does not use a predictor under which one of its blocks would (chain and mean never do). */
#define FL_MAG_MAX 2147483648u
#define FL_HDR_RAW 63u          /* header byte of a block stored raw */
#define FL_SPARSE_BASE 32u      /* header codes 33..62: sparse block of (code - 32) entries */
#define FL_SPARSE_MAX 30u
#define FL_NPRED 4
/* Bit 7 of a tile's predictor byte: block corners are coded as differences from the corner of
 * the tile's previous coded block (+1-3% on the Nyx-like velocities, which have large, slowly
 * varying values); clear, each corner is coded as it is (better on densities). */
#define FL_TILE_CORNER_DELTA 0x80u

/* Ids are ordered so that the predictors a dimensionality allows are 0..fl_npred()-1. Each
 * earns its place on the Nyx-like fields: chain on smooth velocities, mean on noisy
 * temperatures (+4% at REL 1e-4), planar and Lorenzo on densities. */
enum fl_predictor {
    FL_PRED_LORENZO = 0,  /* Lorenzo over the block's dimensions */
    FL_PRED_CHAIN = 1,    /* each value from the one before it along x, rows from rows */
    FL_PRED_MEAN = 2,     /* rounded mean of the x-1, y-1, z-1 neighbours (2-D and 3-D) */
    FL_PRED_PLANAR = 3    /* 2-D Lorenzo in each z-plane, planes chained (3-D only) */
};

/* A chunk folded to at most 3 dimensions, and its block grid. */
typedef struct fl_geom {
    uint64_t nz, ny, nx;
    unsigned dim;             /* 1, 2 or 3: the number of non-unit dimensions, capped */
    unsigned bz, by, bx;      /* block shape */
    uint64_t gbz, gby, gbx;   /* blocks along each axis */
    uint64_t nblocks, ntiles;
} fl_geom;

HZ_HD unsigned fl_npred(const fl_geom *g)
{
    return g->dim == 3 ? 4u : (g->dim == 2 ? 3u : 1u);
}

/* The mean predictor's value from the sum (mod 2^64) of an element's k neighbours inside its
 * block: floor((sum + k / 2) / k) for k = 2 and 3 (the sum taken as signed), else the sum.
 * Without branches, for loops over elements of different k: floor(s / 3) is the unsigned
 * division of s or of its complement, ((s ^ m) / 3) ^ m with m the mask of s's sign. */
HZ_HD uint64_t fl_mean_round(uint64_t sum, unsigned k)
{
    const int64_t s = (int64_t)(sum + (k >> 1));
    const uint64_t m = (uint64_t)(s >> 63);
    const uint64_t third = ((uint64_t)s ^ m) / 3u ^ m;
    return k == 3 ? third : k == 2 ? (uint64_t)(s >> 1) : sum;
}

/* The mean predictor's value at element e = (z by + y) bx + x of a block of codes q: the
 * rounded mean of the neighbours before it (x - 1, y - 1, z - 1) inside the block. */
HZ_HD uint64_t fl_mean_at(const int64_t *q, unsigned e, unsigned z, unsigned y, unsigned x,
                          unsigned by, unsigned bx)
{
    uint64_t sum = 0;
    if (x)
        sum += (uint64_t)q[e - 1];
    if (y)
        sum += (uint64_t)q[e - bx];
    if (z)
        sum += (uint64_t)q[e - bx * by];
    return fl_mean_round(sum, (x > 0) + (y > 0) + (z > 0));
}

/* Prediction of element e of a block from the elements before it (q holds the block's codes in
 * block order; positions outside the block count as 0). residual = q[e] - prediction. */
HZ_HD int64_t fl_predict_at(unsigned pred, unsigned by, unsigned bx, const int64_t *q, unsigned z,
                            unsigned y, unsigned x)
{
    /* unsigned arithmetic: codes decoded from a damaged chunk may wrap, which must not be UB */
#define FLQ(zz, yy, xx) ((uint64_t)q[((zz) * by + (yy)) * bx + (xx)])
    uint64_t p = 0;
    if (pred == FL_PRED_LORENZO) {
        if (x) p += FLQ(z, y, x - 1);
        if (y) p += FLQ(z, y - 1, x);
        if (z) p += FLQ(z - 1, y, x);
        if (x && y) p -= FLQ(z, y - 1, x - 1);
        if (x && z) p -= FLQ(z - 1, y, x - 1);
        if (y && z) p -= FLQ(z - 1, y - 1, x);
        if (x && y && z) p += FLQ(z - 1, y - 1, x - 1);
    } else if (pred == FL_PRED_MEAN) {
        p = fl_mean_at(q, ((z * by) + y) * bx + x, z, y, x, by, bx);
    } else if (pred == FL_PRED_CHAIN || (x == 0 && y == 0)) {
        if (x) p = FLQ(z, y, x - 1);
        else if (y) p = FLQ(z, y - 1, 0);
        else if (z) p = FLQ(z - 1, 0, 0);
    } else { /* planar */
        if (x) p += FLQ(z, y, x - 1);
        if (y) p += FLQ(z, y - 1, x);
        if (x && y) p -= FLQ(z, y - 1, x - 1);
    }
#undef FLQ
    return (int64_t)p;
}

/* The same for element e = (z by + y) bx + x. */
HZ_HD int64_t fl_predict(unsigned pred, unsigned by, unsigned bx, const int64_t *q, unsigned e)
{
    return fl_predict_at(pred, by, bx, q, e / (bx * by), (e / bx) % by, e % bx);
}

/* Outlier width code of the corner residual: 0, 1, 2 or 4 bytes of its zigzag code. */
HZ_HD unsigned fl_wcode(int64_t r0)
{
    uint64_t z = hz_zigzag(r0);
    return z == 0 ? 0u : (z < 256u ? 1u : (z < 65536u ? 2u : 3u));
}

HZ_HD unsigned fl_wbytes(unsigned wcode)
{
    return wcode == 3u ? 4u : wcode;
}

/* Summary of one block's residuals: what decides its header byte and size. */
typedef struct fl_block_stat {
    uint64_t maxmag;   /* largest |r| over elements 1..63 */
    unsigned nnz;      /* non-zero residuals over elements 1..63 */
    int64_t r0;        /* corner residual */
} fl_block_stat;

/* Header byte of a coded (not raw) block; 0 means the block is empty. */
HZ_HD unsigned fl_block_header(const fl_block_stat *s)
{
    unsigned w = fl_wcode(s->r0);
    unsigned L = hz_bitlen(s->maxmag);
    unsigned code = L;
    /* sparse form: 1 byte per non-zero residual of magnitude 1 or 2, when that is smaller */
    if (L > 0 && s->maxmag <= 2 && s->nnz <= FL_SPARSE_MAX && s->nnz < 8u * (L + 1))
        code = FL_SPARSE_BASE + s->nnz;
    return code | (w << 6);
}

/* Payload bytes that follow a header byte (valid for any byte that passed fl_header_valid). */
HZ_HD uint64_t fl_block_payload_size(unsigned hdr, uint64_t nvalid, unsigned esize)
{
    unsigned code = hdr & 63u;
    if (code == FL_HDR_RAW)
        return nvalid * esize;
    uint64_t n = fl_wbytes(hdr >> 6);
    if (code > FL_SPARSE_BASE)
        return n + (code - FL_SPARSE_BASE);
    return n + (code ? 8u * (code + 1u) : 0u);
}

/* Whether a header byte may stand for a block; blocks with fill values may have header 0
 * (nothing but their fill bitmap) and are never raw. */
HZ_HD int fl_header_valid(unsigned hdr, int has_fill_bitmap)
{
    unsigned code = hdr & 63u;
    if (hdr == 0)
        return has_fill_bitmap;
    if (has_fill_bitmap && code == FL_HDR_RAW)
        return 0;
    if (code == FL_HDR_RAW)
        return (hdr >> 6) == 0;
    return code <= FL_MAX_PLANES || (code > FL_SPARSE_BASE && code < FL_HDR_RAW);
}

/* Block b's origin and the number of its elements inside the chunk. */
HZ_HD void fl_block_origin(const fl_geom *g, uint64_t b, uint64_t *z0, uint64_t *y0, uint64_t *x0)
{
    uint64_t bx = b % g->gbx, t = b / g->gbx;
    *x0 = bx * g->bx;
    *y0 = (t % g->gby) * g->by;
    *z0 = (t / g->gby) * g->bz;
}

HZ_HD uint64_t fl_block_nvalid(const fl_geom *g, uint64_t z0, uint64_t y0, uint64_t x0)
{
    uint64_t ez = g->nz - z0 < g->bz ? g->nz - z0 : g->bz;
    uint64_t ey = g->ny - y0 < g->by ? g->ny - y0 : g->by;
    uint64_t ex = g->nx - x0 < g->bx ? g->nx - x0 : g->bx;
    return ez * ey * ex;
}

#endif
