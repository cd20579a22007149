/* The fixed-length codec's arithmetic, shared verbatim by the CPU reference (fixed_cpu.c) and
 * the CUDA kernels (cuda/fixed_kernels.cu): quantiser, predictors, block sizes and block
 * payload coding. docs/FORMAT.md describes the bytes these functions produce. */
#ifndef H5ZGPU_FIXED_COMMON_H
#define H5ZGPU_FIXED_COMMON_H

#include "portable.h"

/* 64 values a block: the widest plane that is one 64-bit word. Shapes by dimensionality:
 * 4x4x4, 8x8, 64. Measured on Nyx-like 512^3 fields, 4x4x4 blocks beat 1-D runs by 10-40%. */
#define FL_BLOCK 64
/* Blocks a tile: a tile shares one 32-bit mask of non-empty blocks and one predictor choice. */
#define FL_TILE 32
/* |q| limit: 3-D Lorenzo sums 8 terms, so residual magnitudes stay below 2^31 and fit 32
 * planes; the corner's zigzag code fits 4 bytes. Larger values make their block raw. */
#define FL_QMAX 268435456.0
#define FL_MAX_PLANES 32
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

/* Fraction bits of the interpolation's codes (huff_interp.h): in format version 3 its
 * reconstructions lie on a grid 16 times finer than the codes'. Version 2 used 8. */
#define FL_FINE_BITS 4u
#define FL_FINE_BITS_V2 8u
/* |x / 2eb| limit of a value format version 3 codes: its code, offset by k0, and every fine
 * code near it are exact in a double. */
#define FL_TMAX_ABS 140737488355328.0   /* 2^47 */

/* The quantiser's constants for one chunk. Format version 3 (every chunk this writer makes)
 * counts codes in steps of 2 eb from 0, offset by the chunk's k0, so that a value once
 * reconstructed lies on a grid every later write of the chunk shares; versions 1 and 2 counted
 * from a base value of the chunk (decoding only). docs/FORMAT.md, "Quantisation". */
typedef struct fl_quant {
    int pwrel;       /* 0: ABS and REL (linear domain); 1: PWREL (log-like domain) */
    int is_f32;
    int grid;        /* 1: format version 3's grid; 0: versions 1-2 */
    unsigned fine;   /* fraction bits of the interpolation's codes */
    double base;     /* versions 1-2, and version 3 with eb = 0: what code 0 stands for (ABS/REL
                      * a value; PWREL the smallest log2-like magnitude) */
    double k0;       /* version 3 with eb > 0: the code offset, an integer below 2^47 */
    double eb;       /* ABS: the bound; REL: the power of two applied; PWREL: the relative bound */
    double twoeb;
    double inv2eb;   /* 1/(2eb), or 0 when eb == 0 (every value must then equal base) */
    double unit;     /* 2^-fine */
    double fine_step; /* 2eb / 2^fine */
    /* encoder only: what values a chunk may already hold from an earlier write of it */
    int rel;         /* REL: the grid follows the chunk's range (fl_prior_error) */
    int keep;        /* the dataset may hold interpolated values (codec auto or Huffman) */
    int has_fill;
    uint64_t fill_bits;  /* the fill value's bits in the element type, zero-extended */
} fl_quant;

/* Whether an element, given by its bits, is the fill value. */
HZ_HD int fl_is_fill(const fl_quant *Q, uint64_t bits)
{
    return Q->has_fill && bits == Q->fill_bits;
}

HZ_HD unsigned fl_npred(const fl_geom *g)
{
    return g->dim == 3 ? 4u : (g->dim == 2 ? 3u : 1u);
}

/* Piecewise-linear log2 (Mitchell): |x| = m 2^e, m in [1,2) -> e + (m - 1). Exact in binary,
 * monotone, and d|x|/|x| <= d(value): a step of eb in this domain moves |x| by at most a
 * factor eb, so PWREL needs no transcendental function and both executors agree bit for bit. */
HZ_HD double fl_log2lin(double a)
{
    int e;
    double f = frexp(a, &e);   /* a = f 2^e, f in [0.5, 1) */
    return hz_add((double)(e - 1), hz_sub(hz_mul(2.0, f), 1.0));
}

HZ_HD double fl_exp2lin(double v)
{
    double e = floor(v);
    /* codes from a damaged chunk may ask for any exponent, or for none (NaN): keep the int
     * conversion defined */
    e = e > 4096.0 ? 4096.0 : (e >= -4096.0 ? e : -4096.0);
    return ldexp(hz_add(1.0, hz_sub(v, e)), (int)e);
}

/* A value as the element type holds it. */
HZ_HD double fl_round_to(const fl_quant *Q, double v)
{
    return Q->is_f32 ? hz_to_f32(v) : v;
}

/* The value of code c (whole steps, or fine ones for the interpolation), in double before the
 * rounding to the element type (a kernel storing a float rounds it once, in its store). */
HZ_HD double fl_reconstruct_wide(const fl_quant *Q, double c)
{
    if (!Q->pwrel)
        return Q->grid && Q->twoeb > 0 ? hz_mul(hz_add(Q->k0, c), Q->twoeb)
                                       : hz_add(Q->base, hz_mul(c, Q->twoeb));
    if (c == 0.0)
        return 0.0;
    double mag;
    if (Q->grid) {
        mag = fl_exp2lin(hz_mul(hz_add(Q->k0, c < 0 ? -c : c), Q->twoeb));
        return c < 0 ? -mag : mag;
    }
    double t = hz_mul(c, Q->twoeb);
    mag = fl_exp2lin(hz_add(hz_sub(t < 0 ? -t : t, 1.0), Q->base));
    return t < 0 ? -mag : mag;
}

HZ_HD double fl_reconstruct_at(const fl_quant *Q, double c)
{
    return fl_round_to(Q, fl_reconstruct_wide(Q, c));
}

/* Reconstruction of quantisation code q. */
HZ_HD double fl_reconstruct(const fl_quant *Q, int64_t q)
{
    return fl_reconstruct_at(Q, (double)q);
}

/* The payload's first 8 bytes: in format version 3 with eb > 0, k0 as a signed 64-bit integer;
 * else the base (f64). */
HZ_HD void fl_put_anchor(uint8_t *p, const fl_quant *Q)
{
    if (Q->grid && Q->twoeb > 0)
        hz_put_u64(p, (uint64_t)(int64_t)Q->k0);
    else
        hz_put_f64(p, Q->base);
}

/* Reads them into Q (whose grid and eb the chunk header set); 0 when no writer could have
 * written them. */
HZ_HD int fl_get_anchor(const uint8_t *p, fl_quant *Q)
{
    if (Q->grid && Q->twoeb > 0) {
        const int64_t k = (int64_t)hz_get_u64(p);
        Q->k0 = (double)k;
        return k <= (int64_t)FL_TMAX_ABS && k >= -(int64_t)FL_TMAX_ABS;
    }
    Q->base = hz_get_f64(p);
    return hz_is_finite(Q->base);
}

/* ---- encoding (format version 3 only) ------------------------------------------------------ */

/* x in steps of 2 eb from 0: ABS and REL x / 2eb, PWREL the log-like magnitude / 2eb. */
HZ_HD double fl_abs_arg(const fl_quant *Q, double x)
{
    return hz_mul(Q->pwrel ? fl_log2lin(x < 0 ? -x : x) : x, Q->inv2eb);
}

/* The quantiser's argument of x in ABS and REL: in steps of 2 eb, from k0. */
HZ_HD double fl_lin_arg(const fl_quant *Q, double x)
{
    return hz_sub(hz_mul(x, Q->inv2eb), Q->k0);
}

/* The quantiser's argument t of x (in steps of 2 eb from k0, before rounding; PWREL: with x's
 * sign) and the error its reconstruction may have, lim; 0 for a value no code stands for
 * (PWREL: zero, which has no logarithm; NaN and infinities; past 2^47 steps). */
HZ_HD int fl_quant_arg(const fl_quant *Q, double x, double *t, double *lim)
{
    if (!Q->pwrel) {
        const double ta = hz_mul(x, Q->inv2eb);
        *t = hz_sub(ta, Q->k0);
        *lim = Q->eb;
        return ta <= FL_TMAX_ABS && ta >= -FL_TMAX_ABS;
    }
    if (x == 0.0 || !hz_is_finite(x))
        return 0;
    const double a = x < 0 ? -x : x, ta = fl_abs_arg(Q, a);
    const double T = hz_sub(ta, Q->k0);
    *t = x < 0 ? -T : T;
    *lim = hz_mul(Q->eb, a);
    return ta <= FL_TMAX_ABS && ta >= -FL_TMAX_ABS;
}

/* Whether the reconstruction r of x is within lim, checked in double precision; a zero bound
 * (eb = 0, or REL on a constant chunk) means bit for bit: -0.0 stays -0.0. */
HZ_HD int fl_within(double r, double x, double lim)
{
    const double err = fabs(hz_sub(r, x));
    return err <= lim && (lim > 0 || !signbit(r) == !signbit(x));
}

HZ_HD int fl_in_range(double t)
{
    return t <= FL_QMAX && t >= -FL_QMAX;   /* false for NaN */
}

/* ABS and REL: the interpolation's fine codes apply where the prediction and the value are below
 * 2^FL_FINE_ZONE steps of 2 eb in magnitude; beyond, its reconstructions snap to the codes'
 * grid. So a value a write stored on the fine grid (2eb / 2^fine) has at most
 * FL_FINE_ZONE + fine + 1 significant bits, which a fresh value has once in 2^10 (of any element
 * type, float32 values held as float64 included): telling the values that must come back as
 * they are from fresh ones costs little (fl_on_fine_grid, fl_prior_error). PWREL's log-like
 * domain has its fine grid far above its values' resolution and needs no zone. */
#define FL_FINE_ZONE 9
#define FL_FINE_ZONE_STEPS 512.0   /* 2^FL_FINE_ZONE */
#define FL_FINE_SIGBITS ((int)(FL_FINE_ZONE + FL_FINE_BITS + 1))

/* The exponent of the lowest set bit of x (finite, not 0) as the element type holds it, and
 * into *bits the number of its significant bits (from the highest set bit to that one). */
HZ_HD int fl_lowbit(const fl_quant *Q, double x, int *bits)
{
    uint64_t m;
    int e, width;
    if (Q->is_f32) {
        const float f = (float)x;
        uint32_t b;
        memcpy(&b, &f, 4);
        e = (int)(b >> 23 & 0xFFu);
        m = (b & 0x7FFFFFu) | (e ? 0x800000u : 0u);
        e = e ? e - 150 : -149;
    } else {
        uint64_t b;
        memcpy(&b, &x, 8);
        e = (int)(b >> 52 & 0x7FFu);
        m = (b & 0xFFFFFFFFFFFFFu) | (e ? UINT64_C(1) << 52 : 0u);
        e = e ? e - 1075 : -1074;
    }
#ifdef __CUDA_ARCH__
    const int tz = __ffsll((long long)m) - 1;
    width = 64 - __clzll((long long)m);
#else
    const int tz = __builtin_ctzll(m);
    width = 64 - __builtin_clzll(m);
#endif
    *bits = width - tz;
    return e + tz;
}

/* REL: how far x may already be from what the user wrote, if an earlier write of its chunk
 * stored it. REL's step 2 eb is a power of two, so a stored value lies on a grid of that step
 * (codes) or 2^fine times finer (the interpolation, inside its zone): its lowest set bit is at
 * least as fine, and its error, at most half the step, at most 2^(lowbit - 1), or 2^(lowbit +
 * fine - 1) for a value with no more significant bits than a fine-grid value in the zone has.
 * Infinite for 0, which lies on every grid. */
HZ_HD double fl_prior_error(const fl_quant *Q, double x)
{
    if (x == 0.0)
        return INFINITY;
    int bits;
    const int low = fl_lowbit(Q, x, &bits);
    return hz_pow2(low - 1 + (Q->keep && bits <= FL_FINE_SIGBITS ? (int)Q->fine : 0));
}

/* ABS and PWREL: whether x may be a value an earlier write of its chunk stored on the fine grid
 * (the dataset's, fixed by its bound): then it must come back as it is. Only values inside the
 * fine zone (PWREL: all) can be. */
HZ_HD int fl_on_fine_grid(const fl_quant *Q, double x)
{
    const double a = Q->pwrel ? (x < 0 ? -x : x) : x;
    const double ta = fl_abs_arg(Q, a);
    /* within half a step of the zone, where the interpolation's values lie */
    if (!Q->pwrel && !(fabs(ta) < FL_FINE_ZONE_STEPS + 1.0))
        return 0;
    const double u = rint(hz_mul(ta, (double)(1u << Q->fine)));
    const double v = hz_mul(u, Q->fine_step);
    return fl_round_to(Q, Q->pwrel ? fl_exp2lin(v) : v) == a;
}

/* Whether a reconstruction r of x (its value v before the rounding to the element type), from
 * code k in steps of 2^-fine (c = k 2^-fine), may replace x: within the bound, and such that a
 * later write of the chunk gives it back unchanged: ABS and PWREL, r's own code is k and a value
 * an earlier write stored comes back as it is; REL, r is v exactly and moves no more than its
 * prior error leaves of the bound. fine: 0 for whole codes, else Q->fine. */
HZ_HD int fl_accept(const fl_quant *Q, double x, double r, double v, double k, unsigned fine)
{
    const double err = fabs(hz_sub(r, x));
    if (Q->rel) {
        const double lim = fmax(hz_sub(Q->eb, fl_prior_error(Q, x)), 0.0);
        return err <= lim && r == v && (lim > 0 || !signbit(r) == !signbit(x));
    }
    const double lim = Q->pwrel ? hz_mul(Q->eb, fabs(x)) : Q->eb;
    double back, unused;
    if (!fl_quant_arg(Q, r, &back, &unused))
        return 0;
    const int same = rint(hz_mul(back, (double)(1u << fine))) == k;
    const int kept = !Q->keep || err == 0.0 || !fl_on_fine_grid(Q, x);
    return fl_within(r, x, lim) && same && kept;
}

/* fl_quantize in ABS and REL, without branches of its own, so that a kernel's elements need not
 * diverge: a value out of range takes code 0 and fails. */
HZ_HD int fl_quantize_lin(const fl_quant *Q, double x, int64_t *q)
{
    double t = 0.0, lim;
    const int in = fl_quant_arg(Q, x, &t, &lim) & fl_in_range(t);
    const double r = rint(in ? t : 0.0);   /* |r| <= FL_QMAX: exact as an int64 and back */
    const double v = fl_reconstruct_wide(Q, r);
    *q = (int64_t)r;
    return in && fl_accept(Q, x, fl_round_to(Q, v), v, r, 0);
}

/* Quantises x; returns 0 when the value cannot be coded (NaN, Inf, past the quantiser's range,
 * a reconstruction that misses the bound in double precision or that a later write of the
 * chunk would not give back). */
HZ_HD int fl_quantize(const fl_quant *Q, double x, int64_t *q)
{
    double t, lim;
    if (!Q->pwrel)
        return fl_quantize_lin(Q, x, q);
    if (x == 0.0) {
        *q = 0;
        return Q->eb > 0 || !signbit(x); /* lossless keeps -0.0 */
    }
    if (!fl_quant_arg(Q, x, &t, &lim) || !fl_in_range(t))
        return 0;
    const double r = rint(t);
    const double v = fl_reconstruct_wide(Q, r);
    *q = (int64_t)r;
    return fl_accept(Q, x, fl_round_to(Q, v), v, r, 0);
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
        /* floor((s + n/2) / n) over the n neighbours present, in wrap-safe arithmetic */
        unsigned n = (x > 0) + (y > 0) + (z > 0);
        if (x) p += FLQ(z, y, x - 1);
        if (y) p += FLQ(z, y - 1, x);
        if (z) p += FLQ(z - 1, y, x);
        if (n > 1) {
            int64_t s = (int64_t)(p + n / 2), d = (int64_t)n;
            p = (uint64_t)(s >= 0 ? s / d : -((-(s + 1)) / d) - 1);
        }
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

HZ_HD uint64_t fl_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

HZ_HD int64_t fl_unzigzag(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* Outlier width code of the corner residual: 0, 1, 2 or 4 bytes of its zigzag code. */
HZ_HD unsigned fl_wcode(int64_t r0)
{
    uint64_t z = fl_zigzag(r0);
    return z == 0 ? 0u : (z < 256u ? 1u : (z < 65536u ? 2u : 3u));
}

HZ_HD unsigned fl_wbytes(unsigned wcode)
{
    return wcode == 3u ? 4u : wcode;
}

HZ_HD unsigned fl_bitlen(uint64_t v)
{
    unsigned n = 0;
    while (v) {
        n++;
        v >>= 1;
    }
    return n;
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
    unsigned L = fl_bitlen(s->maxmag);
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
