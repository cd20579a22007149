/* The quantiser (quant.h) over many values at once, CPU only: the same IEEE operations on
 * doubles, with no branch and no integer conversion of a value that may be out of range, so
 * that the compiler vectorises the loops that call it (their files are compiled without
 * floating-point traps, which lets it compute both sides of a selection). It covers the
 * quantisers most chunks have, ABS and REL on format version 3's grid with no value that must
 * come back exactly (qz_rows_apply); the others stay with the scalar functions.
 * test/quant_rows_test.c holds the two to the same results. */
#ifndef H5ZGPU_QUANT_ROWS_H
#define H5ZGPU_QUANT_ROWS_H

#include "quant.h"

#include <string.h>

/* Whether the functions below give the scalar ones' results for quantiser Q (an encoder's):
 * every integer they work with (k0 2^fine + a prediction below 2^52, codes below 2^31) is exact
 * in a double. */
static inline int qz_rows_apply(const qz_quant *Q)
{
    return !Q->pwrel && Q->grid && Q->twoeb > 0 && !Q->has_exact && Q->fine == QZ_FINE_BITS;
}

/* REL's bound left to x once its prior error is taken (qz_accept); what the rel_lim arguments
 * below hold in REL. */
static inline double qz_rel_limit(const qz_quant *Q, double x)
{
    return fmax(hz_sub(Q->eb, qz_prior_error(Q, x)), 0.0);
}

/* lim[j] = qz_rel_limit(Q, x[j]) for j < n. Float32 values in a loop the compiler vectorises:
 * qz_lowbit's lowest set bit and width of the significand m (below 2^24) from the exponents of
 * the floats that m & -m and m convert to exactly, qz_prior_error's power of two (an exponent
 * within -150..131) built from its bits, and fmax by a comparison (the difference is never
 * NaN: eb is finite). Float64 values one at a time. */
HZ_INLINE void qz_rel_limits(const qz_quant *Q, unsigned n, const double *x, double *lim)
{
    if (!Q->is_f32) {
        for (unsigned j = 0; j < n; j++)
            lim[j] = qz_rel_limit(Q, x[j]);
        return;
    }
    const double eb = Q->eb;
    const int fine = Q->keep ? (int)Q->fine : 0;
    for (unsigned j = 0; j < n; j++) {
        const float f = (float)x[j];
        uint32_t b, bl, bm;
        memcpy(&b, &f, 4);
        const uint32_t e = b >> 23 & 0xFFu, m = (b & 0x7FFFFFu) | (e ? 0x800000u : 0u);
        const float fl = (float)(int32_t)(m & (0u - m)), fm = (float)(int32_t)m;
        memcpy(&bl, &fl, 4);
        memcpy(&bm, &fm, 4);
        const int tz = (int)(bl >> 23) - 127, width = (int)(bm >> 23) - 126;
        const int low = (e ? (int)e - 150 : -149) + tz;
        const int p = low - 1 + (width - tz <= QZ_FINE_SIGBITS ? fine : 0);
        const uint64_t pb = (uint64_t)(int64_t)(p + 1023) << 52;
        double prior;
        memcpy(&prior, &pb, 8);
        const double y = hz_sub(eb, (b & 0x7FFFFFFFu) ? prior : INFINITY);
        lim[j] = y > 0.0 ? y : 0.0;
    }
}

/* A float32's bits as an int32 in the order of the values (-0.0 below +0.0), and back. */
HZ_INLINE int32_t qz_f32_key(uint32_t b)
{
    const int32_t s = (int32_t)b;
    return s ^ ((s >> 31) & 0x7FFFFFFF);
}

HZ_INLINE float qz_f32_of_key(int32_t k)
{
    const uint32_t b = (uint32_t)(k ^ ((k >> 31) & 0x7FFFFFFF));
    float x;
    memcpy(&x, &b, 4);
    return x;
}

/* Elements qz_stats_rows_f32 counts in 32 bits at a time. */
#define QZ_STATS_RUN 65536u

/* The statistics of float32 elements [i0, i1) of in in ABS and REL (qz_stats_cpu's pass over a
 * slice) in a loop the compiler vectorises: fill elements (has_fill, bits fill_bits) counted and
 * left out, NaNs counted and the first one's bits kept, the extremes of the finite values (as
 * integer keys: a float minimum is not a reduction GCC vectorises). Returns 0, leaving the
 * slice to the scalar pass, where an extreme is zero: that pass keeps the first of -0.0 and
 * +0.0. */
HZ_INLINE int qz_stats_rows_f32(const void *in, uint64_t i0, uint64_t i1, int has_fill,
                                uint64_t fill_bits, int *seen, double *lo, double *hi,
                                qz_census *census)
{
    const uint8_t *p = (const uint8_t *)in;
    const uint32_t fb = (uint32_t)fill_bits, use = has_fill != 0;
    int32_t kmin = INT32_MAX, kmax = INT32_MIN;
    uint64_t fills = 0, nans = 0, finite = 0;
    for (uint64_t i = i0; i < i1; i += QZ_STATS_RUN) {
        /* runs whose counts fit 32 bits, each a loop over one pointer */
        const size_t m = (size_t)(i1 - i < QZ_STATS_RUN ? i1 - i : QZ_STATS_RUN);
        const uint8_t *q = p + 4 * i;
        uint32_t nf = 0, nn = 0, nv = 0;
        for (size_t j = 0; j < m; j++) {
            uint32_t b;
            memcpy(&b, q + 4 * j, 4);
            const uint32_t fill = use & (b == fb), mag = b & 0x7FFFFFFFu;
            const uint32_t fin = (mag < 0x7F800000u) & (fill ^ 1u);
            const int32_t k = qz_f32_key(b);
            nf += fill;
            nn += (mag > 0x7F800000u) & (fill ^ 1u);
            nv += fin;
            /* the others as neutral keys, by masks: a selection here makes the reduction
             * conditional, which GCC does not vectorise */
            const int32_t mk = -(int32_t)fin;
            const int32_t a = (k & mk) | (INT32_MAX & ~mk), z = (k & mk) | (INT32_MIN & ~mk);
            kmin = a < kmin ? a : kmin;
            kmax = z > kmax ? z : kmax;
        }
        fills += nf;
        nans += nn;
        finite += nv;
    }
    const float mn = qz_f32_of_key(kmin), mx = qz_f32_of_key(kmax);
    if (finite && (mn == 0.0f || mx == 0.0f))
        return 0;
    census->fill = fills;
    census->nan = nans;
    census->nan_bits = 0;
    for (uint64_t i = i0; nans && i < i1; i++) {
        uint32_t b;
        memcpy(&b, p + 4 * i, 4);
        if ((b & 0x7FFFFFFFu) > 0x7F800000u && !(use && b == fb)) {
            census->nan_bits = b;
            break;
        }
    }
    *seen = finite != 0;
    *lo = finite ? (double)mn : 0.0;
    *hi = finite ? (double)mx : 0.0;
    return 1;
}

/* The quantiser's fields in locals: a loop's stores could otherwise alias them. */
typedef struct qz_lanes {
    double k0, inv2eb, twoeb, eb, fine_step, unit;
    int f32, rel, keep;   /* 0 or 1 */
} qz_lanes;

HZ_INLINE qz_lanes qz_lanes_of(const qz_quant *Q)
{
    return (qz_lanes){.k0 = Q->k0, .inv2eb = Q->inv2eb, .twoeb = Q->twoeb, .eb = Q->eb,
                      .fine_step = Q->fine_step, .unit = Q->unit, .f32 = Q->is_f32 != 0,
                      .rel = Q->rel != 0, .keep = Q->keep != 0};
}

/* signbit, which the compiler does not vectorise */
HZ_INLINE uint64_t qz_sign_bit(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b >> 63;
}

/* qz_accept(Q, x, r, v, code, fine) with ta = x / 2eb, F = 2^fine and lim the bound (REL: the
 * element's rel_lim; else eb). */
HZ_INLINE int qz_accept_lane(const qz_lanes *L, double x, double ta, double r, double v,
                                 double code, double F, double lim)
{
    const double err = fabs(hz_sub(r, x));
    const int within = (err <= lim) & ((lim > 0) | (qz_sign_bit(r) == qz_sign_bit(x)));
    /* REL: r is v exactly */
    const int rel_ok = within & (r == v);
    /* ABS: r's own code is code, and x, if on the fine grid (qz_on_fine_grid), kept */
    const double rb = hz_mul(r, L->inv2eb);
    const int same = (rb <= QZ_TMAX) & (rb >= -QZ_TMAX) &
                     (rint(hz_mul(hz_sub(rb, L->k0), F)) == code);
    const double g = hz_mul(rint(hz_mul(ta, (double)(1u << QZ_FINE_BITS))), L->fine_step);
    const int on_grid =
        (fabs(ta) < QZ_FINE_ZONE_STEPS + 1.0) & ((L->f32 ? hz_to_f32(g) : g) == x);
    const int kept = !L->keep | (err == 0.0) | !on_grid;
    return (L->rel & rel_ok) | ((L->rel ^ 1) & within & same & kept);
}

/* For j < n: qz_quantize(Q, x[j], &q) with Q such that qz_rows_apply, and hf_dq_keep's limit
 * on the code: ok[j] is whether x[j] is coded with a code within +-pmax, then q[j] (else 0). */
HZ_INLINE void qz_quantize_rows(const qz_quant *Q, unsigned n, const double *x,
                                    const double *rel_lim, double pmax, int32_t *q, uint8_t *ok)
{
    const qz_lanes L = qz_lanes_of(Q);
    /* read in every mode: a load under the mode's condition keeps GCC from vectorising */
    const double *lim_at = L.rel ? rel_lim : x;
    for (unsigned j = 0; j < n; j++) {
        const double xj = x[j], ta = hz_mul(xj, L.inv2eb), t = hz_sub(ta, L.k0);
        const int in = (ta <= QZ_TMAX) & (ta >= -QZ_TMAX) & (t <= QZ_QMAX) & (t >= -QZ_QMAX);
        const double r = rint(in ? t : 0.0);
        const double v = hz_mul(hz_add(L.k0, r), L.twoeb);
        const double rv = L.f32 ? hz_to_f32(v) : v;
        const double lj = lim_at[j], lim = L.rel ? lj : L.eb;
        const int good = in & qz_accept_lane(&L, xj, ta, rv, v, r, 1.0, lim) &
                         (r <= pmax) & (r >= -pmax);
        ok[j] = (uint8_t)good;
        q[j] = (int32_t)(good ? r : 0.0);
    }
}

#endif
