/* What both executors of the quality metrics compute: the raw sums of each pass, over the same
 * points with the same element reads, which quality.c then turns into metrics. The GPU kernels
 * (cuda/quality/) and the CPU passes (*_cpu.c) fill these structs; nothing else differs. */
#ifndef H5ZGPU_QUALITY_SUMS_H
#define H5ZGPU_QUALITY_SUMS_H

#include "h5zgpu_quality.h"
#include "portable.h"

#include <stdint.h>

#define HQ_LAGS H5ZGPU_QUALITY_LAGS
#define HQ_BINS H5ZGPU_QUALITY_BINS
#define HQ_SSIM_WINDOW 8

/* The two arrays as the passes read them. */
typedef struct hq_view {
    const void *a, *b;
    int f32;                 /* float32 elements, else float64 */
    int has_missing;
    uint64_t missing_bits;   /* A's bits that mark a missing point (in the element's width) */
} hq_view;

/* Element i of A and B as doubles; both NaN where A holds the missing bits, so that every pass
 * leaves the point out as it leaves out non-finite ones. Returns whether the point is missing. */
HZ_HD int hq_load(const hq_view *v, uint64_t i, double *x, double *y)
{
    uint64_t bits;
    if (v->f32) {
        uint32_t u;
        float fa, fb;
#ifdef __CUDA_ARCH__
        u = ((const uint32_t *)v->a)[i];
        fb = ((const float *)v->b)[i];
#else
        memcpy(&u, (const char *)v->a + 4 * i, 4);
        memcpy(&fb, (const char *)v->b + 4 * i, 4);
#endif
        memcpy(&fa, &u, 4);
        bits = u;
        *x = (double)fa;
        *y = (double)fb;
    } else {
#ifdef __CUDA_ARCH__
        bits = ((const uint64_t *)v->a)[i];
        *y = ((const double *)v->b)[i];
#else
        memcpy(&bits, (const char *)v->a + 8 * i, 8);
        memcpy(y, (const char *)v->b + 8 * i, 8);
#endif
        memcpy(x, &bits, 8);
    }
    if (v->has_missing && bits == v->missing_bits) {
        *x = *y = (double)NAN;
        return 1;
    }
    return 0;
}

/* Whether B holds A's bits at i. */
HZ_HD int hq_same_bits(const hq_view *v, uint64_t i)
{
#ifdef __CUDA_ARCH__
    if (v->f32)
        return ((const uint32_t *)v->a)[i] == ((const uint32_t *)v->b)[i];
    return ((const uint64_t *)v->a)[i] == ((const uint64_t *)v->b)[i];
#else
    size_t es = v->f32 ? 4 : 8;
    return memcmp((const char *)v->a + es * i, (const char *)v->b + es * i, es) == 0;
#endif
}

/* The first pass: counts and error norms over A finite; extremes and sums over both finite. */
typedef struct hq_point_sums {
    uint64_t finite, mismatch, missing, missing_mismatch;
    double a_min, a_max, max_abs, sq;   /* |B - A| is +inf where B is not finite */
    uint64_t both;                      /* both finite */
    double sum_a, sum_b, sum_e, e_min, e_max;
    uint64_t rel_n;                     /* both finite and A != 0 */
    double rel_sum, rel_min, rel_max;
} hq_point_sums;

HZ_HD void hq_point_init(hq_point_sums *s)
{
    memset(s, 0, sizeof *s);
    s->a_min = s->e_min = s->rel_min = (double)INFINITY;
    s->a_max = s->e_max = s->rel_max = -(double)INFINITY;
}

HZ_HD void hq_point_add(const hq_view *v, uint64_t i, hq_point_sums *s)
{
    double x, y;
    if (hq_load(v, i, &x, &y)) {
        s->missing++;
        s->missing_mismatch += !hq_same_bits(v, i);
        return;
    }
    if (!isfinite(x)) {
        s->mismatch += !hq_same_bits(v, i);
        return;
    }
    double e = fabs(y - x);
    if (isnan(e))
        e = (double)INFINITY;
    s->finite++;
    s->a_min = fmin(s->a_min, x);
    s->a_max = fmax(s->a_max, x);
    s->max_abs = fmax(s->max_abs, e);
    s->sq += e * e;
    if (!isfinite(y))
        return;
    if (x != 0) {
        double rel = fabs(y - x) / fabs(x);
        s->rel_min = fmin(s->rel_min, rel);
        s->rel_max = fmax(s->rel_max, rel);
        s->rel_sum += rel;
        s->rel_n++;
    }
    s->sum_a += x;
    s->sum_b += y;
    s->sum_e += y - x;
    s->e_min = fmin(s->e_min, y - x);
    s->e_max = fmax(s->e_max, y - x);
    s->both++;
}

HZ_HD void hq_point_merge(hq_point_sums *s, const hq_point_sums *o)
{
    s->finite += o->finite;
    s->mismatch += o->mismatch;
    s->missing += o->missing;
    s->missing_mismatch += o->missing_mismatch;
    s->a_min = fmin(s->a_min, o->a_min);
    s->a_max = fmax(s->a_max, o->a_max);
    s->max_abs = fmax(s->max_abs, o->max_abs);
    s->sq += o->sq;
    s->both += o->both;
    s->sum_a += o->sum_a;
    s->sum_b += o->sum_b;
    s->sum_e += o->sum_e;
    s->e_min = fmin(s->e_min, o->e_min);
    s->e_max = fmax(s->e_max, o->e_max);
    s->rel_n += o->rel_n;
    s->rel_sum += o->rel_sum;
    s->rel_min = fmin(s->rel_min, o->rel_min);
    s->rel_max = fmax(s->rel_max, o->rel_max);
}

/* The second pass, around the first's means (both finite): spreads, the error's histogram over
 * [e_min, e_max] and its autocorrelation's numerators (pairs both finite) and denominator. */
typedef struct hq_spread_in {
    double mean_a, mean_b, mean_e, e_min, width;   /* width: of a histogram bin */
} hq_spread_in;

/* The sums a thread keeps; the histogram is counted apart (hq_spread_add's return). */
typedef struct hq_spread_acc {
    double saa, sbb, sab, see, lag_den;
    double lag_num[HQ_LAGS];
} hq_spread_acc;

typedef struct hq_spread_sums {
    hq_spread_acc acc;
    uint64_t hist[HQ_BINS];
} hq_spread_sums;

/* Point i's share of n points; its histogram bin, or -1 when it is left out. */
HZ_HD int hq_spread_add(const hq_view *v, uint64_t i, uint64_t n, const hq_spread_in *in,
                        hq_spread_acc *s)
{
    double x, y;
    hq_load(v, i, &x, &y);
    if (!isfinite(x) || !isfinite(y))
        return -1;
    double da = x - in->mean_a, db = y - in->mean_b, e = y - x, de = e - in->mean_e;
    s->saa += da * da;
    s->sbb += db * db;
    s->sab += da * db;
    s->see += e * e;
    s->lag_den += de * de;
    for (int k = 1; k <= HQ_LAGS && i + (uint64_t)k < n; k++) {
        double x1, y1;
        hq_load(v, i + (uint64_t)k, &x1, &y1);
        if (isfinite(x1) && isfinite(y1))
            s->lag_num[k - 1] += de * (y1 - x1 - in->mean_e);
    }
    double k = in->width > 0 ? floor((e - in->e_min) / in->width) : 0;
    return k < 0 ? 0 : k >= HQ_BINS ? HQ_BINS - 1 : (int)k;
}

HZ_HD void hq_spread_merge(hq_spread_acc *s, const hq_spread_acc *o)
{
    s->saa += o->saa;
    s->sbb += o->sbb;
    s->sab += o->sab;
    s->see += o->see;
    s->lag_den += o->lag_den;
    for (int k = 0; k < HQ_LAGS; k++)
        s->lag_num[k] += o->lag_num[k];
}

/* The stencil pass: per order (first differences, second differences, Laplacian) the extremes
 * of A's stencil values, the squared differences of B's from A's, and their count. Along one
 * axis at a time for the first two orders (a point contributes once per axis where the stencil
 * fits and touches only finite values); the Laplacian at points inside along every axis where
 * every axis's second difference is finite. */
typedef struct hq_stencil_sums {
    double lo[3], hi[3], sq[3];
    uint64_t count[3];
} hq_stencil_sums;

typedef struct hq_shape {
    unsigned rank;
    uint64_t dims[H5ZGPU_MAX_RANK], stride[H5ZGPU_MAX_RANK];
} hq_shape;

HZ_HD void hq_stencil_init(hq_stencil_sums *s)
{
    for (int o = 0; o < 3; o++) {
        s->lo[o] = (double)INFINITY;
        s->hi[o] = -(double)INFINITY;
        s->sq[o] = 0;
        s->count[o] = 0;
    }
}

HZ_HD void hq_stencil_take(hq_stencil_sums *s, int o, double da, double db)
{
    s->lo[o] = fmin(s->lo[o], da);
    s->hi[o] = fmax(s->hi[o], da);
    s->sq[o] += (db - da) * (db - da);
    s->count[o]++;
}

HZ_HD void hq_stencil_add(const hq_view *v, uint64_t i, const hq_shape *g, hq_stencil_sums *s)
{
    double a0, b0, la = 0, lb = 0;
    int lap = g->rank > 0;   /* the Laplacian still stands */
    hq_load(v, i, &a0, &b0);
    for (unsigned d = 0; d < g->rank; d++) {
        uint64_t c = i / g->stride[d] % g->dims[d], st = g->stride[d];
        if (c + 1 >= g->dims[d]) {   /* no forward neighbour: no stencil along d */
            lap = 0;
            continue;
        }
        double a1, b1;
        hq_load(v, i + st, &a1, &b1);
        double da = a1 - a0, db = b1 - b0;
        if (isfinite(da) && isfinite(db))
            hq_stencil_take(s, 0, da, db);
        if (c == 0) {
            lap = 0;
            continue;
        }
        double am, bm;
        hq_load(v, i - st, &am, &bm);
        da = a1 - 2 * a0 + am;
        db = b1 - 2 * b0 + bm;
        if (!isfinite(da) || !isfinite(db)) {
            lap = 0;
            continue;
        }
        hq_stencil_take(s, 1, da, db);
        la += da;
        lb += db;
    }
    if (lap)
        hq_stencil_take(s, 2, la, lb);
}

HZ_HD void hq_stencil_merge(hq_stencil_sums *s, const hq_stencil_sums *o)
{
    for (int k = 0; k < 3; k++) {
        s->lo[k] = fmin(s->lo[k], o->lo[k]);
        s->hi[k] = fmax(s->hi[k], o->hi[k]);
        s->sq[k] += o->sq[k];
        s->count[k] += o->count[k];
    }
}

/* Window extents and the SSIM constants; the window sums go in this order. */
enum { HQ_SA, HQ_SB, HQ_SAA, HQ_SBB, HQ_SAB, HQ_SBAD, HQ_NSUMS };

typedef struct hq_ssim_in {
    uint64_t d[3];   /* the array folded to 3-D: slowest axes folded into the first */
    uint64_t w[3];   /* window extents: 8, or the axis's length where shorter */
    double c1, c2;
} hq_ssim_in;

/* One window's SSIM from its sums (count = wz wy wx points, all finite). */
HZ_HD double hq_ssim_window(const double *s, double count, double c1, double c2)
{
    double ma = s[HQ_SA] / count, mb = s[HQ_SB] / count;
    double va = s[HQ_SAA] / count - ma * ma, vb = s[HQ_SBB] / count - mb * mb;
    double cov = s[HQ_SAB] / count - ma * mb;
    return (2 * ma * mb + c1) * (2 * cov + c2) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
}

#endif
