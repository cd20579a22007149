/* The quantiser both codecs share, used verbatim by the CPU references and the CUDA kernels:
 * error modes, the grid of format version 3 (and the base of versions 1-2 for decoding), the
 * rule a reconstruction must pass, and the statistics that set a chunk's quantiser.
 * docs/FORMAT.md, "Quantisation". */
#ifndef H5ZGPU_QUANT_H
#define H5ZGPU_QUANT_H

#include "h5zgpu.h"
#include "portable.h"

/* |q| limit of dual quantisation: the fixed-length codec's 3-D Lorenzo sums 8 terms, so its
 * residuals stay below 2^31 and fit 32 planes, and its corner's zigzag code fits 4 bytes.
 * Larger values are not coded (a raw block, or a verbatim value). */
#define QZ_QMAX 268435456.0

/* Fraction bits of the interpolation's codes (huff_interp.h): in format version 3 its
 * reconstructions lie on a grid 16 times finer than the codes'. Version 2 used 8. */
#define QZ_FINE_BITS 4u
#define QZ_FINE_BITS_V2 8u
/* |x / 2eb| limit of a value format version 3 codes: its code, offset by k0, and every fine
 * code near it are exact in a double. */
#define QZ_TMAX 140737488355328.0   /* 2^47 */

/* The quantiser's constants for one chunk. Format version 3 (every chunk this writer makes)
 * counts codes in steps of 2 eb from 0, offset by the chunk's k0, so that a value once
 * reconstructed lies on a grid every later write of the chunk shares; versions 1 and 2 counted
 * from a base value of the chunk (decoding only). docs/FORMAT.md, "Quantisation". */
typedef struct qz_quant {
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
    int rel;         /* REL: the grid follows the chunk's range (qz_prior_error) */
    int keep;        /* the dataset may hold interpolated values (codec auto or Huffman) */
    int has_fill;
    uint64_t fill_bits;  /* the chunk's fill value's bits in the element type, zero-extended */
    /* encoder only: the declared fill value where a NaN is the chunk's fill (qz_choose_fill):
     * its elements are coded only where they come back exactly */
    int has_exact;
    double exact;
} qz_quant;

/* Whether Q decodes on format version 3's grid in the linear domain (ABS or REL): what the
 * CUDA decoders' kernels with those constants folded in require (qz_decoding). */
HZ_HD int qz_linear_v3(const qz_quant *Q)
{
    return !Q->pwrel && Q->grid && Q->fine == QZ_FINE_BITS;
}

/* Whether an element, given by its bits, is the fill value. */
HZ_HD int qz_is_fill(const qz_quant *Q, uint64_t bits)
{
    return Q->has_fill && bits == Q->fill_bits;
}

/* Whether x is the value that must come back exactly (has_exact): the same number with the same
 * sign, which for a value that is not NaN is the same bits. */
HZ_HD int qz_is_exact(const qz_quant *Q, double x)
{
    return Q->has_exact && x == Q->exact && !signbit(x) == !signbit(Q->exact);
}

/* Piecewise-linear log2 (Mitchell): |x| = m 2^e, m in [1,2) -> e + (m - 1). Exact in binary,
 * monotone, and d|x|/|x| <= d(value): a step of eb in this domain moves |x| by at most a
 * factor eb, so PWREL needs no transcendental function and both executors agree bit for bit. */
HZ_HD double qz_log2lin(double a)
{
    int e;
    double f = frexp(a, &e);   /* a = f 2^e, f in [0.5, 1) */
    return hz_add((double)(e - 1), hz_sub(hz_mul(2.0, f), 1.0));
}

HZ_HD double qz_exp2lin(double v)
{
    double e = floor(v);
    /* codes from a damaged chunk may ask for any exponent, or for none (NaN): keep the int
     * conversion defined */
    e = e > 4096.0 ? 4096.0 : (e >= -4096.0 ? e : -4096.0);
    return ldexp(hz_add(1.0, hz_sub(v, e)), (int)e);
}

/* A value as the element type holds it. */
HZ_HD double qz_round_to(const qz_quant *Q, double v)
{
    return Q->is_f32 ? hz_to_f32(v) : v;
}

/* The value of code c (whole steps, or fine ones for the interpolation), in double before the
 * rounding to the element type (a kernel storing a float rounds it once, in its store). */
HZ_HD double qz_reconstruct_wide(const qz_quant *Q, double c)
{
    if (!Q->pwrel)
        return Q->grid && Q->twoeb > 0 ? hz_mul(hz_add(Q->k0, c), Q->twoeb)
                                       : hz_add(Q->base, hz_mul(c, Q->twoeb));
    if (c == 0.0)
        return 0.0;
    double mag;
    if (Q->grid) {
        mag = qz_exp2lin(hz_mul(hz_add(Q->k0, c < 0 ? -c : c), Q->twoeb));
        return c < 0 ? -mag : mag;
    }
    double t = hz_mul(c, Q->twoeb);
    mag = qz_exp2lin(hz_add(hz_sub(t < 0 ? -t : t, 1.0), Q->base));
    return t < 0 ? -mag : mag;
}

HZ_HD double qz_reconstruct_at(const qz_quant *Q, double c)
{
    return qz_round_to(Q, qz_reconstruct_wide(Q, c));
}

/* Reconstruction of quantisation code q. */
HZ_HD double qz_reconstruct(const qz_quant *Q, int64_t q)
{
    return qz_reconstruct_at(Q, (double)q);
}

/* The payload's first 8 bytes: in format version 3 with eb > 0, k0 as a signed 64-bit integer;
 * else the base (f64). */
HZ_HD void qz_put_anchor(uint8_t *p, const qz_quant *Q)
{
    if (Q->grid && Q->twoeb > 0)
        hz_put_u64(p, (uint64_t)(int64_t)Q->k0);
    else
        hz_put_f64(p, Q->base);
}

/* Reads them into Q (whose grid and eb the chunk header set); 0 when no writer could have
 * written them. */
HZ_HD int qz_get_anchor(const uint8_t *p, qz_quant *Q)
{
    if (Q->grid && Q->twoeb > 0) {
        const int64_t k = (int64_t)hz_get_u64(p);
        Q->k0 = (double)k;
        return k <= (int64_t)QZ_TMAX && k >= -(int64_t)QZ_TMAX;
    }
    Q->base = hz_get_f64(p);
    return hz_is_finite(Q->base);
}

/* ---- encoding (format version 3 only) ------------------------------------------------------ */

/* x in steps of 2 eb from 0: ABS and REL x / 2eb, PWREL the log-like magnitude / 2eb. */
HZ_HD double qz_abs_arg(const qz_quant *Q, double x)
{
    return hz_mul(Q->pwrel ? qz_log2lin(x < 0 ? -x : x) : x, Q->inv2eb);
}

/* The quantiser's argument of x in ABS and REL: in steps of 2 eb, from k0. */
HZ_HD double qz_lin_arg(const qz_quant *Q, double x)
{
    return hz_sub(hz_mul(x, Q->inv2eb), Q->k0);
}

/* The quantiser's argument t of x (in steps of 2 eb from k0, before rounding; PWREL: with x's
 * sign) and the error its reconstruction may have, lim; 0 for a value no code stands for
 * (PWREL: zero, which has no logarithm; NaN and infinities; past 2^47 steps). */
HZ_HD int qz_arg(const qz_quant *Q, double x, double *t, double *lim)
{
    if (!Q->pwrel) {
        const double ta = hz_mul(x, Q->inv2eb);
        *t = hz_sub(ta, Q->k0);
        *lim = Q->eb;
        return ta <= QZ_TMAX && ta >= -QZ_TMAX;
    }
    if (x == 0.0 || !hz_is_finite(x))
        return 0;
    const double a = x < 0 ? -x : x, ta = qz_abs_arg(Q, a);
    const double T = hz_sub(ta, Q->k0);
    *t = x < 0 ? -T : T;
    *lim = hz_mul(Q->eb, a);
    return ta <= QZ_TMAX && ta >= -QZ_TMAX;
}

/* Whether the reconstruction r of x is within lim, checked in double precision; a zero bound
 * (eb = 0, or REL on a constant chunk) means bit for bit: -0.0 stays -0.0. */
HZ_HD int qz_within(double r, double x, double lim)
{
    const double err = fabs(hz_sub(r, x));
    return err <= lim && (lim > 0 || !signbit(r) == !signbit(x));
}

HZ_HD int qz_in_range(double t)
{
    return t <= QZ_QMAX && t >= -QZ_QMAX;   /* false for NaN */
}

/* ABS and REL: the interpolation's fine codes apply where the prediction and the value are below
 * 2^QZ_FINE_ZONE steps of 2 eb in magnitude; beyond, its reconstructions snap to the codes'
 * grid. So a value a write stored on the fine grid (2eb / 2^fine) has at most
 * QZ_FINE_ZONE + fine + 1 significant bits, which a fresh value has once in 2^10 (of any element
 * type, float32 values held as float64 included): telling the values that must come back as
 * they are from fresh ones costs little (qz_on_fine_grid, qz_prior_error). PWREL's log-like
 * domain has its fine grid far above its values' resolution and needs no zone. */
#define QZ_FINE_ZONE 9
#define QZ_FINE_ZONE_STEPS 512.0   /* 2^QZ_FINE_ZONE */
#define QZ_FINE_SIGBITS ((int)(QZ_FINE_ZONE + QZ_FINE_BITS + 1))

/* The exponent of the lowest set bit of x (finite, not 0) as the element type holds it, and
 * into *bits the number of its significant bits (from the highest set bit to that one). */
HZ_HD int qz_lowbit(const qz_quant *Q, double x, int *bits)
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
HZ_HD double qz_prior_error(const qz_quant *Q, double x)
{
    if (x == 0.0)
        return INFINITY;
    int bits;
    const int low = qz_lowbit(Q, x, &bits);
    return hz_pow2(low - 1 + (Q->keep && bits <= QZ_FINE_SIGBITS ? (int)Q->fine : 0));
}

/* ABS and PWREL: whether x may be a value an earlier write of its chunk stored on the fine grid
 * (the dataset's, fixed by its bound): then it must come back as it is. Only values inside the
 * fine zone (PWREL: all) can be. */
HZ_HD int qz_on_fine_grid(const qz_quant *Q, double x)
{
    const double a = Q->pwrel ? (x < 0 ? -x : x) : x;
    const double ta = qz_abs_arg(Q, a);
    /* within half a step of the zone, where the interpolation's values lie */
    if (!Q->pwrel && !(fabs(ta) < QZ_FINE_ZONE_STEPS + 1.0))
        return 0;
    const double u = rint(hz_mul(ta, (double)(1u << Q->fine)));
    const double v = hz_mul(u, Q->fine_step);
    return qz_round_to(Q, Q->pwrel ? qz_exp2lin(v) : v) == a;
}

/* Whether a reconstruction r of x (its value v before the rounding to the element type), from
 * code k in steps of 2^-fine (c = k 2^-fine), may replace x: equal to it where x must come back
 * exactly (qz_is_exact); within the bound, and such that a
 * later write of the chunk gives it back unchanged: ABS and PWREL, r's own code is k and a value
 * an earlier write stored comes back as it is; REL, r is v exactly and moves no more than its
 * prior error leaves of the bound. fine: 0 for whole codes, else Q->fine. */
HZ_HD int qz_accept(const qz_quant *Q, double x, double r, double v, double k, unsigned fine)
{
    const double err = fabs(hz_sub(r, x));
    if (qz_is_exact(Q, x) && !(err == 0.0 && !signbit(r) == !signbit(x)))
        return 0;
    if (Q->rel) {
        const double lim = fmax(hz_sub(Q->eb, qz_prior_error(Q, x)), 0.0);
        return err <= lim && r == v && (lim > 0 || !signbit(r) == !signbit(x));
    }
    const double lim = Q->pwrel ? hz_mul(Q->eb, fabs(x)) : Q->eb;
    double back, unused;
    if (!qz_arg(Q, r, &back, &unused))
        return 0;
    const int same = rint(hz_mul(back, (double)(1u << fine))) == k;
    const int kept = !Q->keep || err == 0.0 || !qz_on_fine_grid(Q, x);
    return qz_within(r, x, lim) && same && kept;
}

/* qz_quantize in ABS and REL, without branches of its own, so that a kernel's elements need not
 * diverge: a value out of range takes code 0 and fails. */
HZ_HD int qz_quantize_lin(const qz_quant *Q, double x, int64_t *q)
{
    double t = 0.0, lim;
    const int in = qz_arg(Q, x, &t, &lim) & qz_in_range(t);
    const double r = rint(in ? t : 0.0);   /* |r| <= QZ_QMAX: exact as an int64 and back */
    const double v = qz_reconstruct_wide(Q, r);
    *q = (int64_t)r;
    return in && qz_accept(Q, x, qz_round_to(Q, v), v, r, 0);
}

/* Quantises x; returns 0 when the value cannot be coded (NaN, Inf, past the quantiser's range,
 * a reconstruction that misses the bound in double precision or that a later write of the
 * chunk would not give back). */
HZ_HD int qz_quantize(const qz_quant *Q, double x, int64_t *q)
{
    double t, lim;
    if (!Q->pwrel)
        return qz_quantize_lin(Q, x, q);
    if (x == 0.0) {
        *q = 0;
        return (Q->eb > 0 && !qz_is_exact(Q, x)) || !signbit(x); /* lossless keeps -0.0 */
    }
    if (!qz_arg(Q, x, &t, &lim) || !qz_in_range(t))
        return 0;
    const double r = rint(t);
    const double v = qz_reconstruct_wide(Q, r);
    *q = (int64_t)r;
    return qz_accept(Q, x, qz_round_to(Q, v), v, r, 0);
}

#ifdef __cplusplus
extern "C" {
#endif

/* The encoder's quantiser (format version 3) for a chunk from its statistics (qz_stats_cpu or
 * the GPU's reduction): lo/hi are the smallest and largest finite values (ABS/REL) or the
 * smallest log2-like magnitude of the non-zero finite values (PWREL, in lo); any = 0 when there
 * is none. The caller sets keep (the dataset's codec may interpolate) and the fill value. */
void qz_init(qz_quant *Q, h5zgpu_mode mode, double eb, int is_f32, int any, double lo, double hi);

/* The quantiser a decoder starts from: the chunk header's mode (REL decodes as ABS), bound and
 * format version; the payload then gives k0 or the base (qz_get_anchor). */
void qz_decoder(qz_quant *Q, h5zgpu_mode mode, double eb_abs, int is_f32, unsigned version);

/* What a chunk holds of the values that may become its fill value: elements of the declared fill
 * value's bits, and NaN elements of other bits with the first of them in element order. */
typedef struct qz_census {
    uint64_t fill;
    uint64_t nan;
    uint64_t nan_bits;
} qz_census;

/* Statistics of the chunk that qz_init needs, and its census, on the CPU; fill's is_f32,
 * has_fill and fill_bits say the element type and the declared fill value, whose elements are
 * left out of the range. */
void qz_stats_cpu(const void *in, uint64_t n, const qz_quant *fill, h5zgpu_mode mode, int *any,
                  double *lo, double *hi, qz_census *census);

/* The chunk's fill value into Q (after qz_init), from its census and the declared fill value, if
 * any (docs/FORMAT.md, "Fill values"): the declared one when no fewer elements hold it than hold
 * NaN of other bits, else the first of those NaN, and then elements of the declared value are
 * coded only where they come back exactly; none when the chunk holds neither. */
void qz_choose_fill(qz_quant *Q, int declared, uint64_t declared_bits, const qz_census *census);

#ifdef __cplusplus
}
#endif

#endif
